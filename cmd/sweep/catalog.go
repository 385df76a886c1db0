package main

import (
	"sweep/recipes"
	"sweep/recipes/models"
)

// withCatalog returns po planning with the shipped recipes unless it
// names a catalog of its own.
func withCatalog(po recipes.PlanOptions) recipes.PlanOptions {
	if po.Catalog == nil {
		po.Catalog = models.Builtin()
	}
	return po
}
