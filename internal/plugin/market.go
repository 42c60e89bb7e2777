package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MarketPath is a marketplace's file, relative to its folder.
const MarketPath = ".claude-plugin/marketplace.json"

// market is a marketplace.json: its plugins and where each comes from.
type market struct {
	Name     string `json:"name"`
	Metadata struct {
		PluginRoot string `json:"pluginRoot"`
	} `json:"metadata"`
	Plugins []marketEntry `json:"plugins"`
}

type marketEntry struct {
	Name   string          `json:"name"`
	Source json.RawMessage `json:"source"`
}

// entrySource is an entry's source object: {"source": "github", "repo":
// "owner/repo"} or {"source": "url", "url": "…"}.
type entrySource struct {
	Source string `json:"source"`
	Repo   string `json:"repo"`
	URL    string `json:"url"`
}

func readMarket(dir string) (market, error) {
	path := filepath.Join(dir, filepath.FromSlash(MarketPath))
	b, err := readOwn(path)
	if err != nil {
		return market{}, fmt.Errorf("%s is not a marketplace: %w", dir, err)
	}
	var m market
	if err := json.Unmarshal(b, &m); err != nil {
		return market{}, fmt.Errorf("%s: %w", path, err)
	}
	if !validName().MatchString(m.Name) {
		return market{}, fmt.Errorf("%s: name %q: want lowercase letters, digits and hyphens", path, m.Name)
	}
	return m, nil
}

// AddMarketplace records the marketplace at src: a folder (read where it
// is) or a git URL (cloned into Dir). It returns its name and its plugins.
func AddMarketplace(ctx context.Context, getenv func(string) string, src string) (Marketplace, []string, error) {
	st, err := LoadState(getenv)
	if err != nil {
		return Marketplace{}, nil, err
	}
	dir, err := ownDir(getenv)
	if err != nil {
		return Marketplace{}, nil, err
	}
	var path string
	var m market
	if isFolder(src, MarketPath) {
		if path, err = filepath.Abs(src); err != nil {
			return Marketplace{}, nil, err
		}
		if m, err = readMarket(path); err != nil {
			return Marketplace{}, nil, err
		}
	} else if url, ok := gitURL(src); ok {
		parent := filepath.Join(dir, marketsDir)
		tmp, err := clone(ctx, url, parent)
		if err != nil {
			return Marketplace{}, nil, err
		}
		if m, err = readMarket(tmp); err != nil {
			_ = os.RemoveAll(tmp)
			return Marketplace{}, nil, fmt.Errorf("%s: %w", url, err)
		}
		if path, err = place(tmp, parent, m.Name); err != nil {
			return Marketplace{}, nil, err
		}
	} else {
		return Marketplace{}, nil, fmt.Errorf("%s is neither a marketplace folder nor a git URL", src)
	}
	for _, x := range st.Marketplaces {
		if x.Name == m.Name {
			return Marketplace{}, nil, fmt.Errorf("a marketplace %s is added already (%s): remove it first", m.Name, x.Path)
		}
	}
	mk := Marketplace{Name: m.Name, Path: path, Source: src}
	st.Marketplaces = append(st.Marketplaces, mk)
	var names []string
	for _, e := range m.Plugins {
		names = append(names, e.Name)
	}
	return mk, names, saveState(getenv, st)
}

// RemoveMarketplace forgets the marketplace name (and its clone); the
// plugins installed from it stay, so one used from its folder must go first.
func RemoveMarketplace(getenv func(string) string, name string) error {
	st, err := LoadState(getenv)
	if err != nil {
		return err
	}
	for i, x := range st.Marketplaces {
		if x.Name != name {
			continue
		}
		for _, p := range st.Plugins {
			if strings.HasPrefix(p.Path, x.Path+string(filepath.Separator)) {
				return fmt.Errorf("the plugin %s is used from the marketplace's folder: remove it first", p.ID)
			}
		}
		st.Marketplaces = append(st.Marketplaces[:i], st.Marketplaces[i+1:]...)
		if err := saveState(getenv, st); err != nil {
			return err
		}
		if filepath.Dir(x.Path) == filepath.Join(Dir(getenv), marketsDir) {
			return os.RemoveAll(x.Path)
		}
		return nil
	}
	return fmt.Errorf("there is no marketplace %s (dsh plugin marketplace list shows them)", name)
}

// fromMarketplace finds the plugin name in the marketplace market and
// returns it: a plugin in the marketplace's folder is used where it is, one
// elsewhere cloned into Dir.
func fromMarketplace(ctx context.Context, st State, dir, name, marketName string) (Plugin, error) {
	var mk *Marketplace
	for i := range st.Marketplaces {
		if st.Marketplaces[i].Name == marketName {
			mk = &st.Marketplaces[i]
		}
	}
	if mk == nil {
		return Plugin{}, fmt.Errorf("there is no marketplace %s: add it with dsh plugin marketplace add", marketName)
	}
	m, err := readMarket(mk.Path)
	if err != nil {
		return Plugin{}, err
	}
	for _, e := range m.Plugins {
		if e.Name != name {
			continue
		}
		var rel string
		if json.Unmarshal(e.Source, &rel) == nil {
			if !strings.HasPrefix(rel, "./") && !strings.HasPrefix(rel, "../") && m.Metadata.PluginRoot != "" {
				rel = filepath.Join(m.Metadata.PluginRoot, rel) // a bare name is below pluginRoot
			}
			root := Plugin{Name: m.Name, Root: mk.Path}
			path, err := root.inside(rel)
			if err != nil {
				return Plugin{}, fmt.Errorf("marketplace %s, plugin %s: %w", m.Name, name, err)
			}
			return Load(path)
		}
		var src entrySource
		if err := json.Unmarshal(e.Source, &src); err != nil {
			return Plugin{}, fmt.Errorf("marketplace %s, plugin %s: source: %w", m.Name, name, err)
		}
		url := src.URL
		switch src.Source {
		case "github":
			url = "https://github.com/" + src.Repo + ".git"
		case "url", "git":
		default:
			return Plugin{}, fmt.Errorf("marketplace %s, plugin %s: dsh does not install from a %q source", m.Name, name, src.Source)
		}
		return cloned(ctx, url, filepath.Join(dir, reposDir))
	}
	return Plugin{}, fmt.Errorf("marketplace %s has no plugin %s", marketName, name)
}
