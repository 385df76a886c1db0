package bfclsim

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/simproto"
	"sweep/internal/usage"
	"sweep/sweep/abgate"
)

// builtinModels are the keys the stand-in lists besides the registered
// one (a few of bfcl-eval's own).
var builtinModels = []string{"gorilla-openfunctions-v2", "gpt-4o-2024-11-20-FC", "Qwen/Qwen3-8B-FC"}

// Command runs a bfcl command line (args: generate, evaluate or models
// and bfcl's flags) as bfcl would for the arm in $SWEEP_SIM_BFCL, in
// $BFCL_PROJECT_ROOT, against $OPENAI_BASE_URL; getenv reads the
// environment. A command line bfcl would reject is a *usage.Error.
func Command(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	arm, rep, err := FromEnv(getenv(simproto.EnvBFCL))
	if err != nil {
		return fmt.Errorf("sim-bfcl: %w", err)
	}
	// bfcl knows the model only through the registration file sweep
	// writes (abgate.Registry): without it, models does not list it and
	// generate and evaluate refuse it, as bfcl does.
	registered, regErr := abgate.RegisteredName(getenv)
	if args[0] == "models" {
		for _, m := range builtinModels {
			fmt.Fprintln(stdout, m)
		}
		if regErr != nil {
			fmt.Fprintf(stderr, "sim-bfcl: no registry entry added: %v\n", regErr)
			return nil
		}
		fmt.Fprintln(stdout, registered)
		return nil
	}
	sub := pflag.NewFlagSet("sim-bfcl "+args[0], pflag.ContinueOnError)
	sub.SetOutput(stderr)
	model := sub.String("model", "", "registry name")
	cats := sub.String("test-category", "all", "categories")
	sub.Float64("temperature", 0.001, "sampling temperature")
	sub.Int("num-threads", 1, "threads")
	sub.BoolP("allow-overwrite", "o", false, "overwrite")
	sub.Bool("partial-eval", false, "partial evaluation")
	if err := sub.Parse(args[1:]); err != nil {
		return usage.Errorf("sim-bfcl %s: %w", args[0], err)
	}
	if regErr != nil || *model != registered {
		why := "it is not the key registered"
		if regErr != nil {
			why = "no registry entry added: " + regErr.Error()
		}
		return fmt.Errorf("sim-bfcl %s: Unknown model_name '%s' (%s)", args[0], *model, why)
	}
	if *model != arm.Model {
		return fmt.Errorf("sim-bfcl: --model %q is not the arm's model %q in %s", *model, arm.Model, simproto.EnvBFCL)
	}
	cs, err := abgate.ExpandCategories(strings.Split(*cats, ","))
	if err != nil {
		return usage.Errorf("sim-bfcl: --test-category: %w", err)
	}
	root := getenv("BFCL_PROJECT_ROOT")
	if root == "" {
		return fmt.Errorf("sim-bfcl: BFCL_PROJECT_ROOT is not set")
	}
	switch args[0] {
	case "generate":
		base := getenv("OPENAI_BASE_URL")
		if base == "" {
			return fmt.Errorf("sim-bfcl generate: OPENAI_BASE_URL is not set")
		}
		fmt.Fprintf(stderr, "sim-bfcl: generating %d categories against %s into %s\n", len(cs), base, root)
		answered, err := Generate(ctx, root, base, arm, cs, rep)
		fmt.Fprintf(stderr, "sim-bfcl: the server answered %d of %d categories' requests\n", answered, len(cs))
		return err
	case "evaluate":
		fmt.Fprintf(stderr, "sim-bfcl: evaluating %d categories in %s\n", len(cs), root)
		return Evaluate(root, arm, cs, rep)
	}
	return usage.Errorf("sim-bfcl: unknown bfcl command %q (want generate, evaluate or models)", args[0])
}
