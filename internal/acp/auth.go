package acp

import (
	"context"
	"errors"
	"github.com/dsh-dev/dsh/internal/host"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/providers"
)

// The sign-in methods dsh offers. Each provider's key is an agent method
// (ACP 1.7.0 removed the env_var type): its authenticate checks that the key
// reached dsh, and acpx passes ACPX_AUTH_<METHOD> as the variable of the
// method's name in capitals. A client that runs terminal methods gets `dsh
// login`; any other is told what to do by the dsh-login agent method.
const (
	authAnthropic = "anthropic-api-key"
	authOpenAI    = "openai-api-key"
	authLogin     = "dsh-login"
)

var authVars = map[string]string{authAnthropic: "ANTHROPIC_API_KEY", authOpenAI: "OPENAI_API_KEY"}

const loginHelp = "Give dsh an API key: set ANTHROPIC_API_KEY or OPENAI_API_KEY in the environment the editor starts dsh with " +
	"(Zed: agent_servers.dsh.env in settings.json), or run `dsh login` in a terminal once. " +
	"An OpenAI-compatible local server needs OPENAI_BASE_URL instead."

// authMethods are the sign-in methods for a client with capabilities caps.
func authMethods(caps sdk.ClientCapabilities) []sdk.AuthMethod {
	key := func(id, name, v, link string) sdk.AuthMethod {
		return sdk.AuthMethod{Agent: &sdk.AuthMethodAgent{Id: id, Name: name,
			Description: sdk.Ptr("Start dsh with " + v + " set (a key from " + link + ").")}}
	}
	ms := []sdk.AuthMethod{
		key(authAnthropic, "Anthropic API key", "ANTHROPIC_API_KEY", "https://console.anthropic.com/settings/keys"),
		key(authOpenAI, "OpenAI API key", "OPENAI_API_KEY", "https://platform.openai.com/api-keys"),
	}
	if caps.Auth.Terminal {
		ms = append(ms, sdk.AuthMethod{Terminal: &sdk.AuthMethodTerminalInline{Id: authLogin, Name: "Sign in with dsh login",
			Type: "terminal", Args: []string{"login"}, Description: sdk.Ptr("Type an API key; dsh keeps it for every session.")}})
	} else {
		ms = append(ms, sdk.AuthMethod{Agent: &sdk.AuthMethodAgent{Id: authLogin, Name: "API key", Description: sdk.Ptr(loginHelp)}})
	}
	return ms
}

// Authenticate checks that the method's key has reached dsh. A key the client
// passed in the environment is kept in the user's credentials file when their
// configuration says api_key_store = "file"; it is never logged.
func (a *Agent) Authenticate(_ context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	resp, err := a.authenticate(p)
	if err == nil {
		a.signedOut.Store(false)
	}
	return resp, err
}

func (a *Agent) authenticate(p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if p.MethodId == authLogin {
		if host.Keyed(a.o.Getenv) {
			return sdk.AuthenticateResponse{}, nil
		}
		return sdk.AuthenticateResponse{}, authRequired("No API key yet. " + loginHelp)
	}
	name, ok := authVars[p.MethodId]
	if !ok {
		return sdk.AuthenticateResponse{}, sdk.NewInvalidParams(map[string]any{"error": "unknown authentication method " + p.MethodId})
	}
	key := a.o.Getenv(name)
	if key == "" {
		if host.KeySet(a.o.Getenv, name) {
			return sdk.AuthenticateResponse{}, nil
		}
		return sdk.AuthenticateResponse{}, authRequired(name + " is not set in dsh's environment: the editor must start dsh with it. " + loginHelp)
	}
	if err := host.KeepKey(a.o.Getenv, name, key); err != nil {
		return sdk.AuthenticateResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.AuthenticateResponse{}, nil
}

// Logout signs out: dsh forgets the keys it kept in the user's credentials
// file, and until the client authenticates again every prompt is answered
// auth_required, whatever key the environment still holds.
func (a *Agent) Logout(context.Context, sdk.LogoutRequest) (sdk.LogoutResponse, error) {
	a.signedOut.Store(true)
	if err := host.ForgetKeys(a.o.Getenv); err != nil {
		return sdk.LogoutResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.LogoutResponse{}, nil
}

// authRequired is the error an editor answers with its sign-in.
func authRequired(msg string) *sdk.RequestError {
	e := sdk.NewAuthRequired(map[string]any{"message": msg})
	e.Message = "Authentication required: " + msg
	return e
}

// promptError says a prompt could not run: a missing or refused key is
// auth_required, anything else an internal error with the message.
func promptError(err error) *sdk.RequestError {
	if errors.Is(err, providers.ErrNoProvider) || errors.Is(err, provider.ErrAuth) {
		return authRequired(err.Error())
	}
	return &sdk.RequestError{Code: -32603, Message: err.Error()}
}
