// Package models holds the recipes sweep ships, one file per InferenceX
// benchmark script (benchmarks/single_node/agentic/<model>_<precision>_<gpu>[_<engine>][_mtp].sh),
// with the argument lists several of them share. Builtin returns them as a
// catalog for the planning machinery in sweep/recipes:
//
//	points, err := recipes.Plan(rows, recipes.PlanOptions{Catalog: models.Builtin(), Runners: runners})
//
// A recipe is data (recipes.Recipe): its engine, image-matched flag list,
// environment and client; the engine-specific parts come from the engine
// table (configs/engine.go) through the machinery.
package models
