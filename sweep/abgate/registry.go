package abgate

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sweep/internal/atomicfile"
	"sweep/internal/inputfile"
)

// The environment variables the registration file reads (sitecustomize.py).
const (
	// EnvRegistryName is the BFCL registry key (bfcl --model).
	EnvRegistryName = "SWEEP_BFCL_REGISTRY_NAME"
	// EnvAPIModel is the model name bfcl sends to the server.
	EnvAPIModel = "SWEEP_BFCL_API_MODEL"
)

// SitecustomizeFile is the registration file's name: Python imports it at
// start-up from the first PYTHONPATH entry that has it.
const SitecustomizeFile = "sitecustomize.py"

//go:embed sitecustomize.py
var sitecustomize []byte

// Sitecustomize returns the registration file. It is static: the model's
// names reach it through EnvRegistryName and EnvAPIModel, never as code.
func Sitecustomize() []byte { return bytes.Clone(sitecustomize) }

// Registry is the BFCL model registry entry of one (arm, replicate) run:
// the key added to bfcl_eval's MODEL_CONFIG_MAPPING with
// OpenAICompletionsHandler and underscore_to_dot=True (bfcl-ab.md §2.7,
// §6 step 2), by a sitecustomize.py in Dir, which Env puts first on the
// bfcl processes' PYTHONPATH:
//
//	r := abgate.Registry{Name: "Org/M-FC", APIModel: "Org/M", Dir: dir}
//	err := r.Write()                       // dir/sitecustomize.py
//	env := r.Env(os.Getenv("PYTHONPATH"))  // then verify with "bfcl models"
//
// Nothing is inserted into the installed bfcl_eval, and nothing is assumed:
// "bfcl models" must list Name before generate runs.
type Registry struct {
	// Name is the registry key (bfcl --model), e.g. "Org/M-FC".
	Name string
	// APIModel is the model name sent to the server (its served model
	// name); "" means Name.
	APIModel string
	// Dir holds sitecustomize.py; it is created by Write.
	Dir string
}

// CheckRegistryName refuses a registry key bfcl cannot evaluate: bfcl maps
// a result directory's name back to its key with "_" → "/", so a key with
// "_" is never found again.
func CheckRegistryName(name string) error {
	switch {
	case name == "":
		return errors.New("bfcl registry name: empty; want e.g. Org/Model-FC")
	case strings.Contains(name, "_"):
		return fmt.Errorf("bfcl registry name %q contains \"_\": bfcl maps result directories back to registry names with \"_\" → \"/\", so evaluation would not find it; use a name without \"_\" (e.g. %q)", name, strings.ReplaceAll(name, "_", "-"))
	case strings.ContainsAny(name, " \t\r\n"):
		return fmt.Errorf("bfcl registry name %q contains white space; want e.g. Org/Model-FC", name)
	}
	return nil
}

// Write checks the name and writes Dir/sitecustomize.py.
func (r Registry) Write() error {
	if err := CheckRegistryName(r.Name); err != nil {
		return err
	}
	if r.Dir == "" {
		return errors.New("bfcl registry: no directory for " + SitecustomizeFile)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return fmt.Errorf("bfcl registry: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(r.Dir, SitecustomizeFile), sitecustomize, 0o644); err != nil {
		return fmt.Errorf("bfcl registry: %w", err)
	}
	return nil
}

// Env is the environment of the bfcl processes that makes Python load the
// registration: Dir first on PYTHONPATH, before the inherited entries,
// the key and the API model name.
func (r Registry) Env(inherited string) map[string]string {
	path := r.Dir
	if inherited != "" {
		path += string(os.PathListSeparator) + inherited
	}
	api := r.APIModel
	if api == "" {
		api = r.Name
	}
	return map[string]string{"PYTHONPATH": path, EnvRegistryName: r.Name, EnvAPIModel: api}
}

// RegisteredName is the registry key a Python process started with the
// environment getenv would register: the check the simulated bfcl makes
// in place of importing bfcl_eval. It fails, naming what is missing, unless
// the first PYTHONPATH entry holds this package's sitecustomize.py
// unchanged and EnvRegistryName holds a usable key.
func RegisteredName(getenv func(string) string) (string, error) {
	first, _, _ := strings.Cut(getenv("PYTHONPATH"), string(os.PathListSeparator))
	if first == "" {
		return "", errors.New("PYTHONPATH is empty: no registration file (" + SitecustomizeFile + ") is loaded")
	}
	file := filepath.Join(first, SitecustomizeFile)
	data, err := inputfile.Read(file, inputfile.Text)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("the first PYTHONPATH entry %s has no %s", first, SitecustomizeFile)
	case err != nil:
		return "", err
	case !bytes.Equal(data, sitecustomize):
		return "", fmt.Errorf("%s is not the registration file sweep writes", file)
	}
	name := getenv(EnvRegistryName)
	if name == "" {
		return "", fmt.Errorf("%s is not set: %s registers nothing", EnvRegistryName, file)
	}
	if err := CheckRegistryName(name); err != nil {
		return "", err
	}
	return name, nil
}
