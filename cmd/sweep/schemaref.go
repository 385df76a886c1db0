package main

import "sweep/recipes/schema"

// resolveSchema finds TOOL[@VERSION] among the embedded schemas; an
// unknown one is a usage error.
func resolveSchema(ref string) (*schema.Schema, error) {
	cat, err := schema.Embedded()
	if err != nil {
		return nil, err
	}
	s, err := cat.Resolve(ref)
	if err != nil {
		return nil, &FlagError{Err: err}
	}
	return s, nil
}

// toolArgs splits TOOL[@VERSION] from the arguments after it, dropping
// one leading "--" (args is not empty).
func toolArgs(args []string) (string, []string) {
	rest := args[1:]
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	return args[0], rest
}
