package metrics

import (
	"sweep/configs"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestALCheckString(t *testing.T) {
	g, s, r := 3.39, 2.0, 1.0
	c := CheckAL("x", ALCounters{Engine: configs.SGLang, GenerationTokens: &s, Requests: &r, VerifyCalls: &r}, &g, 0.05)
	assert.Equal(t, "measured 1.000, golden 3.390 (±0.05): fail", c.String())
	c = CheckAL("x", ALCounters{Engine: configs.VLLM}, nil, 0)
	assert.Equal(t, "measured n/a, golden n/a (±0.05): not_measured", c.String())
}
