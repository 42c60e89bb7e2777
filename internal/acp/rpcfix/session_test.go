package rpcfix

import (
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// session/new's result written by hand is the SDK's encoding of it, byte for
// byte, whatever its strings hold; what it does not know is left to the
// general way.
func TestAppendNewSessionIsTheSDKs(t *testing.T) {
	odd := "a <b> & \"c\"\n\t\x01 \u2028\u2029 é \xff\xfe 😀 \\"
	opts := sdk.SessionConfigSelectOptionsUngrouped{
		{Value: "m1", Name: "Model one", Description: sdk.Ptr("1000k context")},
		{Value: sdk.SessionConfigValueId(odd), Name: odd},
	}
	var none sdk.SessionConfigSelectOptionsUngrouped
	sel := func(id, cur string, cat *sdk.SessionConfigOptionCategory, desc *string, o *sdk.SessionConfigSelectOptionsUngrouped) sdk.SessionConfigOption {
		return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{Id: sdk.SessionConfigId(id), Name: id + " name",
			CurrentValue: sdk.SessionConfigValueId(cur), Category: cat, Description: desc, Type: "select",
			Options: sdk.SessionConfigSelectOptions{Ungrouped: o}}}
	}
	modes := &sdk.SessionModeState{CurrentModeId: "plan", AvailableModes: []sdk.SessionMode{
		{Id: "default", Name: "Default", Description: sdk.Ptr("Ask first")},
		{Id: sdk.SessionModeId(odd), Name: odd},
	}}
	for name, r := range map[string]sdk.NewSessionResponse{
		"bare":         {SessionId: "20260101-000000-abc"},
		"odd id":       {SessionId: sdk.SessionId(odd)},
		"modes":        {SessionId: "s", Modes: modes},
		"no modes":     {SessionId: "s", Modes: &sdk.SessionModeState{CurrentModeId: "x"}},
		"empty modes":  {SessionId: "s", Modes: &sdk.SessionModeState{AvailableModes: []sdk.SessionMode{}}},
		"empty config": {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{}},
		"options": {SessionId: "s", Modes: modes, ConfigOptions: []sdk.SessionConfigOption{
			sel("mode", "plan", sdk.Ptr(sdk.SessionConfigOptionCategoryMode), sdk.Ptr("What dsh may do"), &opts),
			sel(odd, odd, sdk.Ptr(sdk.SessionConfigOptionCategory(odd)), sdk.Ptr(odd), &opts),
			sel("bare", "", nil, nil, &opts),
			sel("none", "x", nil, nil, &none),
			sel("empty", "x", nil, nil, &sdk.SessionConfigSelectOptionsUngrouped{}),
		}},
		"another type": {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{
			Id: "t", Type: "other", Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := AppendNewSession(nil, r)
			if !ok {
				t.Fatal("left to the general way")
			}
			want, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("wrote\n%s\nthe SDK\n%s", got, want)
			}
		})
	}
	meta := map[string]any{"x": 1}
	for name, r := range map[string]sdk.NewSessionResponse{
		"meta":        {SessionId: "s", Meta: meta},
		"modes meta":  {SessionId: "s", Modes: &sdk.SessionModeState{Meta: meta}},
		"mode meta":   {SessionId: "s", Modes: &sdk.SessionModeState{AvailableModes: []sdk.SessionMode{{Id: "a", Meta: meta}}}},
		"boolean":     {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{{Boolean: &sdk.SessionConfigOptionBoolean{}}}},
		"no variant":  {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{{}}},
		"option meta": {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{sel("m", "x", nil, nil, &sdk.SessionConfigSelectOptionsUngrouped{{Value: "v", Meta: meta}})}},
		"select meta": {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{Meta: meta, Options: sdk.SessionConfigSelectOptions{Ungrouped: &opts}}}}},
		"grouped":     {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{Options: sdk.SessionConfigSelectOptions{Grouped: &sdk.SessionConfigSelectOptionsGrouped{}}}}}},
		"no options":  {SessionId: "s", ConfigOptions: []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{}}}},
	} {
		if got, ok := AppendNewSession(nil, r); ok {
			t.Errorf("%s: wrote %s, want it left to the general way", name, got)
		}
	}
}
