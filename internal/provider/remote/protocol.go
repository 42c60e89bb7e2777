// Package remote runs the model providers in a child process, the model
// runner (cmd/dsh-model), so that dsh itself never loads a provider SDK: the
// SDKs are half of dsh's code, and their package initialisation ran in every
// process, an editor's idle `dsh acp` included, before any model was asked.
// The runner is started at the first model call and serves every session of
// the process; this package is both ends of the pipe between them: the
// client (Provider, List, Served) and the runner's loop (Serve).
package remote

import (
	"bufio"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/dsh-dev/dsh/internal/provider"
	"github.com/dsh-dev/dsh/internal/provider/models"
)

// Spec is a provider as the runner builds it: a backend's name, the choices
// of the command line, and the values of the variables it reads (the
// configuration and dsh login put some there that the process's environment
// does not have).
type Spec struct {
	Backend   string            `json:"backend"`
	Model     string            `json:"model,omitempty"`
	OpenAIAPI string            `json:"openaiAPI,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// Getenv reads the spec's variables.
func (s Spec) Getenv(k string) string { return s.Env[k] }

// hello is the runner's first line: the protocol it speaks, which the
// client checks, so a dsh and a dsh-model of different builds say so
// instead of misreading each other.
const hello = "dsh-model/1"

// The operations of a call.
const (
	opBuild  = "build"  // Spec: build it, answer its Name
	opStream = "stream" // Spec, Request: Deltas, then the Response
	opList   = "list"   // Spec: the models it serves
	opServed = "served" // Spec: the first model an OpenAI-compatible server lists
	opCancel = "cancel" // the call ID: stop it (no answer of its own)
)

// call is one line to the runner.
type call struct {
	ID   uint64            `json:"id"`
	Op   string            `json:"op"`
	Spec *Spec             `json:"spec,omitempty"`
	Req  *provider.Request `json:"req,omitempty"`
}

// reply is one line from the runner: a delta of a stream, or with Done the
// call's end, its result or its Err.
type reply struct {
	ID     uint64             `json:"id"`
	Delta  *provider.Delta    `json:"delta,omitempty"`
	Done   bool               `json:"done,omitzero"`
	Err    *wireError         `json:"err,omitempty"`
	Resp   *provider.Response `json:"resp,omitempty"`
	Name   string             `json:"name,omitempty"`
	Models []models.Info      `json:"models,omitempty"`
	Model  string             `json:"model,omitempty"`
}

// wireError is an error with what dsh acts on kept: a credential refused or
// missing (provider.ErrAuth: an editor asks the user to sign in), a model
// retries could not reach (provider.ErrUnavailable: the fallback model).
type wireError struct {
	Msg         string `json:"msg"`
	Auth        bool   `json:"auth,omitzero"`
	Unavailable bool   `json:"unavailable,omitzero"`
}

func (e *wireError) Error() string { return e.Msg }

// Is matches the sentinels the error carried in the runner.
func (e *wireError) Is(target error) bool {
	return e.Auth && target == provider.ErrAuth || e.Unavailable && target == provider.ErrUnavailable
}

// wire is how both ends write and read a line: nil slices and maps stay nil
// (the providers tell "none" from "empty"), and text that is not UTF-8 is
// sent with replacement characters, as an SDK sends it, instead of failing
// the call.
var wire = json.JoinOptions(json.FormatNilSliceAsNull(true), json.FormatNilMapAsNull(true),
	jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) // a model's arguments may repeat a key

// encodeLine is v as one line.
func encodeLine(v any) ([]byte, error) {
	b, err := json.Marshal(v, wire)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// readLine reads one line into v.
func readLine(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	if err := json.Unmarshal(line, v, wire); err != nil {
		return fmt.Errorf("a line the model runner could not read: %w", err)
	}
	return nil
}

// restoreNil undoes what JSON does to absent raw values (nil arrives as the
// text null): a part's arguments, a tool's schema. The request a provider is
// handed is the one dsh built.
func restoreNil(req *provider.Request) {
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			if string(req.Messages[i].Parts[j].Args) == "null" {
				req.Messages[i].Parts[j].Args = nil
			}
		}
	}
	for i := range req.Tools {
		if string(req.Tools[i].Schema) == "null" {
			req.Tools[i].Schema = nil
		}
	}
}
