package anthropic

import (
	"context"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/dsh-dev/dsh/internal/provider/models"
)

// listTimeout bounds one listing: it happens while a session starts.
const listTimeout = 15 * time.Second

// Models lists the models cfg reaches, with the table's figures merged in and
// the API's own limits, which are the truth for this account and model.
func Models(ctx context.Context, cfg Config) ([]models.Info, error) {
	svc := sdk.NewModelService(append(cfg.options(), option.WithMaxRetries(1), option.WithRequestTimeout(listTimeout))...)
	var out []models.Info
	pager := svc.ListAutoPaging(ctx, sdk.ModelListParams{})
	for pager.Next() {
		m := pager.Current()
		if m.Lifecycle == sdk.ModelInfoLifecycleRetired {
			continue
		}
		i := models.Lookup(m.ID)
		i.Provider = "anthropic"
		if m.DisplayName != "" {
			i.Name = m.DisplayName
		}
		if m.MaxInputTokens > 0 {
			i.ContextWindow, i.Known = m.MaxInputTokens, true
		}
		if m.MaxTokens > 0 {
			i.MaxOutput = m.MaxTokens
		}
		out = append(out, i)
	}
	if err := pager.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
