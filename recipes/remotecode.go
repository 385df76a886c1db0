package recipes

import (
	"fmt"
	"slices"
	"strings"
)

// remoteCodeOrgs are the Hugging Face organisations whose model
// repositories' Python code sweep lets an engine or a client run
// (--trust-remote-code, --tokenizer-trust-remote-code): the organisations
// of the models the shipped master configs benchmark. Most recipes pass
// the flag (Qwen3.5, DeepSeek-V4 and Kimi ship their own modelling code),
// so the flag cannot simply be left out; instead a model from data a
// pull request controls (its master configs) must belong to one of these
// organisations. Adding one is a reviewed change to the base branch.
var remoteCodeOrgs = []string{"MiniMaxAI", "Qwen", "amd", "deepseek-ai", "moonshotai", "nvidia", "zai-org"}

// RemoteCodeOrgs returns the allowed organisations, sorted.
func RemoteCodeOrgs() []string { return slices.Clone(remoteCodeOrgs) }

// CheckRemoteCode returns an error unless model's repository code may
// run: model is "org/name" with org in RemoteCodeOrgs, or one name
// without an organisation (a canonical Hugging Face model or a name the
// runner resolves locally; neither is a repository a pull request author
// can publish code in). Anything else, paths included, is refused.
func CheckRemoteCode(model string) error {
	org, name, ok := strings.Cut(model, "/")
	switch {
	case model == "" || strings.ContainsAny(model, " \t\r\n\\"):
		return fmt.Errorf("model %q is not a Hugging Face model id", model)
	case !ok:
		return nil
	case strings.Contains(name, "/") || org == "." || org == ".." || name == "." || name == "..":
		return fmt.Errorf("model %q is not a Hugging Face model id (org/name): the PR sweep loads models by id, not by path", model)
	case !slices.Contains(remoteCodeOrgs, org):
		return fmt.Errorf("model %s: its recipe runs the repository's Python code (--trust-remote-code), and organisation %q is not one whose code the PR sweep runs (%s); a maintainer adds it to recipes.RemoteCodeOrgs in a reviewed change to the base branch",
			model, org, strings.Join(RemoteCodeOrgs(), ", "))
	}
	return nil
}
