package schema_test

import (
	"fmt"
	"strings"

	"sweep/recipes/schema"
)

func ExampleBuilder() {
	b := schema.MustLoad("aiperf", "0.12.0").NewBuilder()
	b.String("--model", "Qwen/Qwen3.5-397B-A17B-FP8").Int("--concurrency", 32).Bool("--streaming", true)
	b.Bool("--use-chat-template", true) // InferenceX's fixed-sequence client flag, not aiperf's
	_, err := b.Argv()
	for _, e := range schema.Problems(err) {
		fmt.Println(e)
	}
	// Output:
	// aiperf 0.12.0 has no flag --use-chat-template (did you mean --apply-chat-template?)
}

func ExampleSchema_Parse() {
	s := schema.MustLoad("sglang", "v0.5.16")
	p, err := s.Parse(s.TrimProgram([]string{"python3", "-m", "sglang.launch_server",
		"--model-path", "Qwen/Qwen3.5-397B-A17B-FP8", "--tp", "8", "--enable-metrics", "--mem-fraction-static", "0.8"}))
	if err != nil {
		fmt.Println(err)
		return
	}
	tp, _ := p.Int("--tp-size")
	mem, _ := p.Float("--mem-fraction-static")
	metrics, _ := p.Bool("--enable-metrics")
	fmt.Println(tp, mem, metrics)
	fmt.Println(strings.Join(p.Args(), " "))
	// Output:
	// 8 0.8 true
	// --model-path Qwen/Qwen3.5-397B-A17B-FP8 --tp-size 8 --enable-metrics --mem-fraction-static 0.8
}
