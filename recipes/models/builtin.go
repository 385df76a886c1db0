package models

import "sweep/recipes"

// Builtin returns the recipes shipped with sweep (one file per recipe in this
// package). Each call returns fresh values, so callers may modify them.
func Builtin() *recipes.Catalog {
	c, err := recipes.NewCatalog(
		qwen35FP8MI325X(),
		qwen35FP4MI355XSGLang(),
		qwen35FP8MI300X(),
		kimiK3FP4MI355X(),
		dsv4FP4MI355XVLLM(),
		minimaxM3FP8MI300X(),
		glm52FP8MI325X(),
		minimaxM3FP8MI325X(),
		minimaxM3FP4MI355X(),
		glm52FP4MI355XSGLang(),
		dsv4FP4MI355XSGLang(),
		qwen35FP8B300SGLang(),
		qwen35FP8B200SGLang(),
		qwen35FP4B300SGLang(),
		qwen35FP4B200SGLang(),
		minimaxM3FP8H200(),
		minimaxM3FP8H100(),
		qwen35FP8H200(),
		qwen35FP8H100(),
		glm52FP4B300SGLang(),
		glm52FP4B200SGLang(),
		minimaxM3FP4B300(),
		minimaxM3FP4B200(),
		dsv4FP4B300SGLang(),
		dsv4FP4B200SGLang(),
		dsv4FP4B300VLLM(),
		dsv4FP4B200VLLM(),
		kimiK3FP4B300VLLM(),
	)
	if err != nil {
		panic("recipes: built-in catalog: " + err.Error()) // a programming error caught by every test
	}
	return c
}

// WithBuiltin returns po planning with the shipped recipes unless it
// names a catalog of its own.
func WithBuiltin(po recipes.PlanOptions) recipes.PlanOptions {
	if po.Catalog == nil {
		po.Catalog = Builtin()
	}
	return po
}
