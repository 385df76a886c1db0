package loadgen

import (
	"fmt"
	"math/rand/v2"
)

// SyntheticTraces generates n agentic coding traces in the WEKA format
// with a fixed seed: the built-in trace set used when no trace source is
// available, and the generator of testdata/traces/agentic-small.jsonl.
//
// Shape (chosen to resemble the public cc-traces corpora at a small
// scale, not measured from them): 4-16 main-agent turns; a first prompt
// of 1,000-3,000 tokens (system prompt + task); each later turn's input
// is the previous input plus the previous output plus a tool result of
// 100-1,200 tokens, so its hash ids extend the previous turn's (block
// size 64); outputs of 20-600 tokens; recorded api_time and 0-20 s of
// think time; about one trace in three spawns a 2-4 turn subagent that
// shares the first system-prompt blocks. Every trace's hash ids are
// local to it (hash_id_scope "local").
func SyntheticTraces(seed uint64, n int) []Trace {
	rng := rand.New(rand.NewPCG(seed, 0x5eed_a9e7))
	const bs = 64
	out := make([]Trace, 0, n)
	for i := range n {
		t := Trace{
			ID:        fmt.Sprintf("synth_%04d_%06x", i, rng.Uint32()&0xffffff),
			Models:    []string{"synthetic-agent"},
			BlockSize: bs,
		}
		nextID := int64(1)
		var hashes []int64
		grow := func(tokens int) {
			for len(hashes)*bs < tokens {
				hashes = append(hashes, nextID)
				nextID++
			}
		}
		turns := 4 + rng.IntN(13)
		in := 1000 + rng.IntN(2001)
		now := 0.0
		prevOut := 0
		spawnAt := -1
		if rng.IntN(3) == 0 {
			spawnAt = 1 + rng.IntN(turns-1)
		}
		for k := range turns {
			if k > 0 {
				in += prevOut + 100 + rng.IntN(1101)
			}
			if k == spawnAt {
				sub := TraceRequest{T: now, Type: "subagent", AgentID: fmt.Sprintf("agent_%03d", k)}
				subHashes := append([]int64(nil), hashes[:min(len(hashes), 8)]...)
				subIn := len(subHashes)*bs + 200 + rng.IntN(800)
				st := 0.0
				for j := range 2 + rng.IntN(3) {
					if j > 0 {
						subIn += 100 + rng.IntN(600)
					}
					for len(subHashes)*bs < subIn {
						subHashes = append(subHashes, nextID)
						nextID++
					}
					out := 20 + rng.IntN(300)
					api := 0.3 + float64(out)*0.01
					sub.Requests = append(sub.Requests, TraceRequest{
						T: round3(st), Type: "n", Model: "synthetic-subagent", In: subIn, Out: out,
						HashIDs: append([]int64(nil), subHashes...), Stop: "tool_use", APITime: round3(api),
					})
					subIn += out
					st += api + rng.Float64()*2
				}
				now += st
				t.Requests = append(t.Requests, sub)
			}
			grow(in)
			out := 20 + rng.IntN(581)
			api := 0.5 + float64(in)*0.00005 + float64(out)*0.012
			think := 0.0
			if k > 0 {
				think = rng.Float64() * 20
			}
			now += think
			stop := "tool_use"
			if k == turns-1 {
				stop = "end_turn"
			}
			t.Requests = append(t.Requests, TraceRequest{
				T: round3(now), Type: "n", Model: "synthetic-agent", In: in, Out: out,
				HashIDs: append([]int64(nil), hashes[:(in+bs-1)/bs]...), Stop: stop,
				APITime: round3(api), ThinkTime: round3(think),
			})
			now += api
			prevOut = out
		}
		out = append(out, t)
	}
	return out
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
