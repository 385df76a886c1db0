package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"sweep/internal/simproto"
	"sweep/sweep/abgate"
	"sweep/sweep/abgate/bfclsim"
)

// simBFCLBuiltinModels are the keys the stand-in lists besides the
// registered one (a few of bfcl-eval's own).
var simBFCLBuiltinModels = []string{"gorilla-openfunctions-v2", "gpt-4o-2024-11-20-FC", "Qwen/Qwen3-8B-FC"}

// newSimBFCLCmd is the stand-in sweep ab run --simulate runs in place of
// the bfcl program.
func newSimBFCLCmd(ios *IOStreams) *Command {
	return &Command{
		Name:  "sim-bfcl",
		Short: "Internal: stand in for bfcl (generate, evaluate, models) in simulated A/B legs",
		Long:  helpText("sim_bfcl"),
		Flags: func() (*pflag.FlagSet, func(context.Context, []string) error) {
			fs := pflag.NewFlagSet("sim-bfcl", pflag.ContinueOnError)
			fs.SetInterspersed(false)
			return fs, func(ctx context.Context, args []string) error {
				if len(args) == 0 {
					return flagErrorf("sim-bfcl: want a bfcl command after -- (generate, evaluate or models)")
				}
				arm, rep, err := bfclsim.FromEnv(os.Getenv(simproto.EnvBFCL))
				if err != nil {
					return fmt.Errorf("sim-bfcl: %w", err)
				}
				// bfcl knows the model only through the registration file
				// sweep writes (abgate.Registry): without it, models does not
				// list it and generate and evaluate refuse it, as bfcl does.
				registered, regErr := abgate.RegisteredName(os.Getenv)
				if args[0] == "models" {
					for _, m := range simBFCLBuiltinModels {
						fmt.Fprintln(ios.Out, m)
					}
					if regErr != nil {
						fmt.Fprintf(ios.ErrOut, "sim-bfcl: no registry entry added: %v\n", regErr)
						return nil
					}
					fmt.Fprintln(ios.Out, registered)
					return nil
				}
				sub := pflag.NewFlagSet("sim-bfcl "+args[0], pflag.ContinueOnError)
				sub.SetOutput(ios.ErrOut)
				model := sub.String("model", "", "registry name")
				cats := sub.String("test-category", "all", "categories")
				sub.Float64("temperature", 0.001, "sampling temperature")
				sub.Int("num-threads", 1, "threads")
				sub.BoolP("allow-overwrite", "o", false, "overwrite")
				sub.Bool("partial-eval", false, "partial evaluation")
				if err := sub.Parse(args[1:]); err != nil {
					return &FlagError{Err: fmt.Errorf("sim-bfcl %s: %w", args[0], err)}
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
					return &FlagError{Err: fmt.Errorf("sim-bfcl: --test-category: %w", err)}
				}
				root := os.Getenv("BFCL_PROJECT_ROOT")
				if root == "" {
					return fmt.Errorf("sim-bfcl: BFCL_PROJECT_ROOT is not set")
				}
				switch args[0] {
				case "generate":
					base := os.Getenv("OPENAI_BASE_URL")
					if base == "" {
						return fmt.Errorf("sim-bfcl generate: OPENAI_BASE_URL is not set")
					}
					fmt.Fprintf(ios.ErrOut, "sim-bfcl: generating %d categories against %s into %s\n", len(cs), base, root)
					answered, err := bfclsim.Generate(ctx, root, base, arm, cs, rep)
					fmt.Fprintf(ios.ErrOut, "sim-bfcl: the server answered %d of %d categories' requests\n", answered, len(cs))
					return err
				case "evaluate":
					fmt.Fprintf(ios.ErrOut, "sim-bfcl: evaluating %d categories in %s\n", len(cs), root)
					return bfclsim.Evaluate(root, arm, cs, rep)
				}
				return flagErrorf("sim-bfcl: unknown bfcl command %q (want generate, evaluate or models)", args[0])
			}
		},
	}
}
