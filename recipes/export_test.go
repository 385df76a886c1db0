package recipes

// Unexported helpers the external tests (package recipes_test, which plans
// with sweep/recipes/models) check against.
var (
	HealthURL      = healthURL
	EvalResultDir  = evalResultDir
	KVName         = kvName
	WriteCommand   = writeCommand
	AMDJobScript   = amdJobScript
	FstackSrtSlurm = fstackSrtSlurm
	NvidiaSrtSlurm = nvidiaSrtSlurm
	Settings       = settings
	SrtRecipes     = srtRecipes
	WithAddress    = withAddress
)
