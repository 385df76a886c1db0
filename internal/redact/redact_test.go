package redact

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedaction(t *testing.T) {
	env := Env(map[string]string{"HF_TOKEN": "hf_abc", "WANDB_API_KEY": "k", "TP": "8", "HUGGING_FACE_HUB_TOKEN": "x", "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token", "AWS_SECRET_ACCESS_KEY": "a"})
	assert.Equal(t, map[string]string{"HF_TOKEN": Marker, "WANDB_API_KEY": Marker, "TP": "8", "HUGGING_FACE_HUB_TOKEN": Marker, "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token", "AWS_SECRET_ACCESS_KEY": Marker}, env)
	in := []string{"vllm", "serve", "m", "--api-key", "s3cret", "--hf-token=hf_x", "--tokenizer", "m"}
	argv := Argv(in)
	assert.Equal(t, []string{"vllm", "serve", "m", "--api-key", Marker, "--hf-token=" + Marker, "--tokenizer", "m"}, argv)
	assert.Equal(t, "s3cret", in[4], "the argv given is copied")
}
