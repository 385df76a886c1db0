package recipes

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"sweep/configs"
)

func TestCheckRemoteCode(t *testing.T) {
	for _, tc := range []struct{ model, err string }{
		{"Qwen/Qwen3.5-397B-A17B-FP8", ""},
		{"deepseek-ai/DeepSeek-V4-Pro", ""},
		{"deepseek-r1-fp4", ""},
		{"some-org/x", `organisation "some-org" is not one whose code the PR sweep runs`},
		{"qwen/Qwen3.5", `organisation "qwen" is not one`},
		{"../../etc/x", "not a Hugging Face model id"},
		{"/models/x", "not a Hugging Face model id"},
		{"Qwen/a/b", "not a Hugging Face model id"},
		{"", "not a Hugging Face model id"},
	} {
		err := CheckRemoteCode(tc.model)
		if tc.err == "" {
			assert.NoError(t, err, tc.model)
		} else {
			assert.ErrorContains(t, err, tc.err, tc.model)
		}
	}
}

// TestShippedModelsMayRunRemoteCode: every model of the shipped master
// configs passes, so the allow-list blocks only models a change brings.
func TestShippedModelsMayRunRemoteCode(t *testing.T) {
	m, err := configs.DefaultMasters()
	assert.NoError(t, err)
	for _, k := range m.Keys() {
		c, _ := m.Lookup(k)
		assert.NoError(t, CheckRemoteCode(c.Model), k)
	}
}
