package models

import "sweep/recipes"

// The argument groups InferenceX's GLM-5.2 SGLang scripts share (see
// ArgGroup), so each recipe lists only the flags where it differs.

// glm52Parsers are GLM-5.2's tool-call and reasoning parsers (GLM-4.7's
// tool-call format, GLM-4.5's reasoning format), as every GLM-5.2 script
// passes them.
var glm52Parsers = recipes.ArgGroup("glm5.2 parsers",
	recipes.Flag("--tool-call-parser", "glm47"),
	recipes.Flag("--reasoning-parser", "glm45"),
)

// glm52SGLangTail is what every GLM-5.2 script passes after the
// speculative and offload flags: the 30-minute watchdog and the metrics
// the client scrapes (MI325X adds the cache report after it).
var glm52SGLangTail = recipes.ArgGroup("glm5.2 sglang tail",
	recipes.Flag("--watchdog-timeout", 1800),
	recipes.Flag("--enable-metrics", nil),
)
