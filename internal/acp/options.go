package acp

import (
	"fmt"
	"strconv"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/host"
)

// The session's config options (Zed builds its mode, model and thinking
// pickers from them).
const (
	optMode     = "mode"
	optModel    = "model"
	optThinking = "thinking"
)

// thinkingDefault is the thinking value meaning "as configured".
const thinkingDefault = host.ThinkingDefault

// currentModel is the model a session uses.
func (a *Agent) currentModel(s *sess) (model, thinking string) {
	model, thinking = s.h.Model()
	if model == "" {
		model = a.o.Model
	}
	return model, thinking
}

func (a *Agent) configOptions(s *sess) []sdk.SessionConfigOption {
	model, thinking := a.currentModel(s)
	return a.configOptionsFor(s, model, thinking)
}

// configOptionsFor are the options with model and thinking in force: a model
// record's, which is published before the agent folds it.
func (a *Agent) configOptionsFor(s *sess, model, thinking string) []sdk.SessionConfigOption {
	if thinking == "" {
		thinking = thinkingDefault
	}
	modes := make(sdk.SessionConfigSelectOptionsUngrouped, 0, len(host.Modes))
	for _, m := range s.h.Modes() { // auto only where commands run in the sandbox
		name, desc := modeText(m)
		modes = append(modes, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m), Name: name, Description: sdk.Ptr(desc)})
	}
	var ms sdk.SessionConfigSelectOptionsUngrouped
	seen := map[string]bool{}
	for _, m := range s.h.Models() { // the host's list, the one /model checks
		if seen[m.ID] {
			continue
		}
		seen[m.ID] = true
		ms = append(ms, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.ID), Name: m.Name, Description: modelDesc(m)})
	}
	if model == "" {
		model = "default"
	}
	if !seen[model] {
		i := host.LookupModel(model)
		ms = append(sdk.SessionConfigSelectOptionsUngrouped{{Value: sdk.SessionConfigValueId(model), Name: i.Name, Description: modelDesc(i)}}, ms...)
	}
	var th sdk.SessionConfigSelectOptionsUngrouped
	known := false
	for _, l := range host.ThinkingLevels {
		known = known || l.Value == thinking
		th = append(th, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(l.Value), Name: l.Name, Description: sdk.Ptr(l.Desc)})
	}
	if !known { // a token budget from the configuration
		th = append(th, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(thinking), Name: thinking + " tokens"})
	}
	sel := func(id, name, desc string, cat sdk.SessionConfigOptionCategory, cur string, opts sdk.SessionConfigSelectOptionsUngrouped) sdk.SessionConfigOption {
		return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{
			Id: sdk.SessionConfigId(id), Name: name, Description: sdk.Ptr(desc), Category: sdk.Ptr(cat), Type: "select",
			CurrentValue: sdk.SessionConfigValueId(cur), Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}}
	}
	return []sdk.SessionConfigOption{
		sel(optMode, "Mode", "What dsh may do without asking", sdk.SessionConfigOptionCategoryMode, string(s.h.Mode()), modes),
		sel(optModel, "Model", "The model the session talks to", sdk.SessionConfigOptionCategoryModel, model, ms),
		sel(optThinking, "Thinking", "How much the model thinks before it answers", sdk.SessionConfigOptionCategoryThoughtLevel, thinking, th),
	}
}

// modelDesc is what the picker says of a model: its window and prices, as
// "%dk context, $%.2f/$%.2f per million tokens in/out" formats them (strconv,
// not fmt: every session/new describes every model).
func modelDesc(m host.Model) *string {
	if !m.Known {
		return nil
	}
	b := strconv.AppendInt(make([]byte, 0, 64), m.ContextWindow/1000, 10)
	b = append(b, "k context"...)
	if m.Priced {
		b = strconv.AppendFloat(append(b, ", $"...), m.InputPrice, 'f', 2, 64)
		b = strconv.AppendFloat(append(b, "/$"...), m.OutputPrice, 'f', 2, 64)
		b = append(b, " per million tokens in/out"...)
	}
	d := string(b)
	return &d
}

// setOption applies one config option: each change is a record (mode or
// model), which the stream turns into the updates that say so.
func (a *Agent) setOption(s *sess, id, value string) error {
	switch id {
	case optMode:
		m, err := host.ParseMode(value)
		if err != nil {
			return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		return s.h.SetMode(m)
	case optModel:
		if err := s.h.CheckModel(value); err != nil {
			return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		_, thinking := s.h.Model()
		return s.h.SetModel(value, thinking)
	case optThinking:
		if err := host.CheckThinking(value); err != nil {
			return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		if value == thinkingDefault {
			value = ""
		}
		model, _ := a.currentModel(s)
		if model == "" {
			return sdk.NewInvalidParams(map[string]any{"error": "choose a model before the thinking level"})
		}
		return s.h.SetModel(model, value)
	}
	return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown config option %q (want %s, %s or %s)", id, optMode, optModel, optThinking)})
}
