package configs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Templates for master entries. Line numbers matter: the search-space
// entry is on line 14 (fixed), 13 (agentic) and 15-17 (multinode).

// fixedDoc is a single-node fixed-seq-len entry with ss as its only
// search-space entry (line 14) and extra top-level lines after line 8.
func fixedDoc(ss string) string {
	return `k:
  image: img
  model: org/m
  model-prefix: m
  runner: mi355x
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: 1024
        osl: 1024
        search-space:
          - ` + ss + "\n"
}

// agenticDoc is a single-node agentic entry with runner and ss (line 13).
func agenticDoc(runner, item, ss string) string {
	return `k:
  image: img
  model: org/m
  model-prefix: m
  runner: ` + runner + `
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    agentic-coding:
      - ` + item + `
        search-space:
          - ` + ss + "\n"
}

// multiDoc is a multinode fixed-seq-len entry; top is inserted as line 9
// (one line), ss goes on line 15 and the workers on lines 16-17.
func multiDoc(top, ss, prefill, decode string) string {
	return `k:
  image: img
  model: org/m
  model-prefix: m
  runner: gb200
  precision: fp4
  framework: dynamo-sglang
  multinode: true
  ` + top + `
  scenarios:
    fixed-seq-len:
      - isl: 8192
        osl: 1024
        search-space:
          - ` + ss + `
            prefill: ` + prefill + `
            decode: ` + decode + "\n"
}

const (
	okPrefill = "{num-worker: 1, tp: 4, ep: 4, dp-attn: true}"
	okDecode  = "{num-worker: 1, tp: 8, ep: 8, dp-attn: true}"
	ssPath    = "k.scenarios.fixed-seq-len[0].search-space[0]"
	agPath    = "k.scenarios.agentic-coding[0].search-space[0]"
)

func TestParseMastersRules(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []wantErr
	}{
		// Valid documents.
		{name: "valid fixed range", doc: fixedDoc("{tp: 8, conc-start: 4, conc-end: 64}")},
		{name: "valid fixed list with every optional key", doc: fixedDoc("{tp: 8, pp: 2, dcp-size: 4, pcp-size: 1, ep: 8, dp-attn: true, spec-decoding: mtp, router: {name: r, version: '0.1'}, conc-list: [1, 2]}")},
		{name: "valid agentic none", doc: agenticDoc("cluster:mi355x-amds", "dram-utilization: 0.8", "{tp: 8, kv-offloading: none, conc-list: [1]}")},
		{name: "valid agentic dram with backend version", doc: agenticDoc("cluster:mi355x-amds", "dram-utilization: 1", "{tp: 8, kv-offloading: dram, kv-offload-backend: {name: lmcache, version: 0.5.1}, conc-list: [1]}")},
		{name: "valid multinode disagg", doc: multiDoc("disagg: true", "conc-list: [4, 8]", okPrefill, okDecode) + "  kv-p2p-transfer: nixl\n"},
		{name: "valid aggregated multinode with kv-p2p-transfer per entry", doc: multiDoc("disagg: false", "kv-p2p-transfer: nixl", okPrefill, okDecode) + "            conc-list: [1]\n"},
		{name: "valid worker hardware on both", doc: multiDoc("disagg: false", "conc-list: [1]", "{num-worker: 1, tp: 4, ep: 4, dp-attn: true, hardware: gb200}", "{num-worker: 0, tp: 8, ep: 8, dp-attn: false, hardware: gb300, additional-settings: [\"A=1\"]}")},

		// Keys.
		{name: "unknown search-space key", doc: fixedDoc("{tp: 8, conc-list: [1], tpp: 2}"),
			want: []wantErr{{14, ssPath + ".tpp", `unknown key "tpp"`}}},
		{name: "unknown top-level key with suggestion", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "model-prefix:", "model-prefx:", 1),
			want: []wantErr{{4, "k.model-prefx", `did you mean "model-prefix"?`}}},
		{name: "star in key", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "k:", "dsr1-*:", 1),
			want: []wantErr{{1, "dsr1-*", "'*' is not allowed in master config keys"}}},
		{name: "duplicate key in flow mapping", doc: fixedDoc("{tp: 8, tp: 4, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".tp", "duplicate key (first defined at line 14)"}}},
		{name: "duplicate top-level key in one file", doc: fixedDoc("{tp: 8, conc-list: [1]}") + strings.Replace(fixedDoc("{tp: 4, conc-list: [1]}"), "  image: img\n", "", 1),
			want: []wantErr{{15, "k", "duplicate key (first defined at line 1)"}}},
		{name: "duplicate nested key", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  model: org/m\n", "  model: org/m\n  model: org/n\n", 1),
			want: []wantErr{{4, "k.model", "duplicate key (first defined at line 3)"}}},
		{name: "missing required key", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  image: img\n", "", 1),
			want: []wantErr{{1, "k.image", "required key is missing"}}},
		{name: "missing multinode", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  multinode: false\n", "", 1),
			want: []wantErr{{1, "k.multinode", "required key is missing"}}},
		{name: "multinode not a bool", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "multinode: false", "multinode: 'no'", 1),
			want: []wantErr{{8, "k.multinode", "must be true or false"}}},
		{name: "numeric key", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "k:", "1234:", 1),
			want: []wantErr{{1, "1234", "is read as an integer, not a string; quote it"}}},
		{name: "merge key with a bad value", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  image: img\n", "  <<: img\n", 1),
			want: []wantErr{{1, "k.image", "required key is missing"}, {2, "k.<<", "a merge key needs a mapping"}}},
		{name: "entry not a mapping", doc: "k: [1, 2]\n",
			want: []wantErr{{1, "k", "must be a mapping, got a list"}}},
		{name: "file not a mapping", doc: "- a\n- b\n",
			want: []wantErr{{1, "", "must be a mapping, got a list"}}},
		{name: "yaml syntax error", doc: "k:\n  a: b\n   c: d\n",
			want: []wantErr{{3, "", "invalid YAML"}}},
		{name: "YAML 1.1 boolean in a string field", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "precision: fp8", "precision: yes", 1),
			want: []wantErr{{6, "k.precision", "read as a boolean by YAML 1.1"}}},
		{name: "image with shell text", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  image: img\n", "  image: \"lmsysorg/sglang:v0.5.16 $(id)\"\n", 1),
			want: []wantErr{{2, "k.image", `image "lmsysorg/sglang:v0.5.16 $(id)" holds characters a launcher's shell text cannot carry`}}},
		{name: "enroot image reference", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  image: img\n", "  image: nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc14\n", 1)},
		{name: "number in a string field", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "precision: fp8", "precision: 8", 1),
			want: []wantErr{{6, "k.precision", "must be a string, got an integer"}}},

		// Concurrency.
		{name: "conc-list and range", doc: fixedDoc("{tp: 8, conc-list: [1], conc-start: 1, conc-end: 4}"),
			want: []wantErr{{14, ssPath + ".conc-list", "use either an explicit list or a range, not both"}}},
		{name: "no concurrency", doc: fixedDoc("{tp: 8}"),
			want: []wantErr{{14, ssPath, "no concurrency given"}}},
		{name: "conc-start without conc-end", doc: fixedDoc("{tp: 8, conc-start: 4}"),
			want: []wantErr{{14, ssPath + ".conc-end", "conc-start and conc-end must be given together"}}},
		{name: "conc-start above conc-end", doc: fixedDoc("{tp: 8, conc-start: 64, conc-end: 4}"),
			want: []wantErr{{14, ssPath + ".conc-start", "conc-start (64) must be <= conc-end (4)"}}},
		{name: "conc-start zero", doc: fixedDoc("{tp: 8, conc-start: 0, conc-end: 4}"),
			want: []wantErr{{14, ssPath + ".conc-start", "must be > 0"}}},
		{name: "conc-end negative", doc: fixedDoc("{tp: 8, conc-start: 1, conc-end: -4}"),
			want: []wantErr{{14, ssPath + ".conc-end", "must be > 0"}}},
		{name: "conc-list value not positive", doc: fixedDoc("{tp: 8, conc-list: [4, 0, -1]}"),
			want: []wantErr{{14, ssPath + ".conc-list[1]", "concurrency must be > 0, got 0"}, {14, ssPath + ".conc-list[2]", "got -1"}}},
		{name: "conc-list repeats a value", doc: fixedDoc("{tp: 8, conc-list: [4, 8, 4]}"),
			want: []wantErr{{14, ssPath + ".conc-list[2]", "concurrency 4 is listed twice"}}},
		{name: "conc-list value absurd", doc: fixedDoc("{tp: 8, conc-list: [4, 1000000000000000000]}"),
			want: []wantErr{{14, ssPath + ".conc-list[1]", "concurrency 1000000000000000000 is above 65536"}}},
		{name: "conc-end absurd", doc: fixedDoc("{tp: 8, conc-start: 1, conc-end: 1000000000000000000}"),
			want: []wantErr{{14, ssPath + ".conc-end", "concurrency 1000000000000000000 is above 65536"}}},
		{name: "conc-list empty", doc: fixedDoc("{tp: 8, conc-list: []}"),
			want: []wantErr{{14, ssPath + ".conc-list", "at least one concurrency"}}},
		{name: "conc-list not integers", doc: fixedDoc("{tp: 8, conc-list: [4, '8']}"),
			want: []wantErr{{14, ssPath + ".conc-list[1]", "must be an integer"}}},

		// Topology.
		{name: "dcp-size does not divide tp", doc: fixedDoc("{tp: 8, dcp-size: 3, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".dcp-size", "tp (8) must be divisible by dcp-size (3)"}}},
		{name: "pp zero", doc: fixedDoc("{tp: 8, pp: 0, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".pp", "must be >= 1"}}},
		{name: "pcp-size string", doc: fixedDoc("{tp: 8, pcp-size: '2', conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".pcp-size", "must be an integer"}}},
		{name: "tp missing", doc: fixedDoc("{ep: 8, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".tp", "required key is missing"}}},
		{name: "dp-attn not a bool", doc: fixedDoc("{tp: 8, dp-attn: 1, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".dp-attn", "must be true or false"}}},
		{name: "spec-decoding literal", doc: fixedDoc("{tp: 8, spec-decoding: eagle, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".spec-decoding", `unknown spec-decoding "eagle"; allowed: mtp, draft_model, none`}}},
		{name: "kv-offloading in a fixed-seq-len entry", doc: fixedDoc("{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".kv-offloading", "only valid in agentic-coding search-space entries"}}},

		// Single-node scope.
		{name: "single-node disagg true", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  multinode: false\n", "  multinode: false\n  disagg: true\n", 1),
			want: []wantErr{{9, "k.disagg", "disagg: true requires multinode: true"}}},
		{name: "single-node top-level kv-p2p-transfer", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "  multinode: false\n", "  multinode: false\n  kv-p2p-transfer: nixl\n", 1),
			want: []wantErr{{9, "k.kv-p2p-transfer", "only valid when multinode: true"}}},
		{name: "single-node agentic kv-p2p-transfer", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: none, kv-p2p-transfer: nixl, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".kv-p2p-transfer", "only valid when multinode: true"}}},
		{name: "single-node prefill", doc: fixedDoc("{tp: 8, prefill: {}, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".prefill", "only valid when multinode: true"}}},

		// Scenarios.
		{name: "scenarios empty", doc: strings.SplitAfter(fixedDoc(""), "  scenarios:")[0] + " {}\n",
			want: []wantErr{{9, "k.scenarios", "at least one scenario"}}},
		{name: "scenarios with empty list", doc: strings.SplitAfter(fixedDoc(""), "  scenarios:")[0] + "\n    fixed-seq-len: []\n",
			want: []wantErr{{10, "k.scenarios", "at least one scenario"}}},
		{name: "unknown scenario", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "fixed-seq-len:", "fixed-seq:", 1),
			want: []wantErr{{10, "k.scenarios.fixed-seq", `unknown key "fixed-seq"`}, {10, "k.scenarios", "at least one scenario"}}},
		{name: "isl missing and osl zero", doc: strings.Replace(strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "- isl: 1024\n        osl: 1024", "- osl: 0", 1), "", "", 1),
			want: []wantErr{{11, "k.scenarios.fixed-seq-len[0].isl", "required key is missing"}, {11, "k.scenarios.fixed-seq-len[0].osl", "must be >= 1"}}},
		{name: "search-space empty", doc: strings.Replace(fixedDoc("X"), "search-space:\n          - X", "search-space: []", 1),
			want: []wantErr{{13, "k.scenarios.fixed-seq-len[0].search-space", "at least one search-space entry"}}},
		{name: "max-model-len is generated", doc: strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "osl: 1024", "osl: 1024\n        max-model-len: 4096", 1),
			want: []wantErr{{13, "k.scenarios.fixed-seq-len[0].max-model-len", "isl+osl+256"}}},

		// Agentic.
		{name: "agentic needs a cluster runner", doc: agenticDoc("mi355x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{5, "k.runner", `must use a "cluster:<name>" runner label`}}},
		{name: "agentic kv-offloading missing", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".kv-offloading", "single-node agentic entries must set kv-offloading"}}},
		{name: "agentic kv-offloading literal", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: ssd, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".kv-offloading", `unknown kv-offloading "ssd"; allowed: none, dram`}}},
		{name: "agentic backend with none", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: none, kv-offload-backend: {name: hicache}, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".kv-offload-backend", "can only be set when kv-offloading is dram"}}},
		{name: "agentic dram without backend", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: dram, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".kv-offload-backend", "kv-offloading: dram requires kv-offload-backend"}}},
		{name: "agentic backend extra key", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: dram, kv-offload-backend: {name: lmcache, mode: cpu}, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".kv-offload-backend.mode", `unknown key "mode"`}}},
		{name: "agentic backend image version", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: dram, kv-offload-backend: {name: lmcache, version: 'image:vllm/vllm-openai:v0.23.0'}, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".kv-offload-backend.version", "is an image reference"}}},
		{name: "agentic dram needs dram-utilization", doc: strings.Replace(agenticDoc("cluster:x", "X", "{tp: 8, kv-offloading: dram, kv-offload-backend: {name: native}, conc-list: [16]}"), "- X\n        search-space:", "- search-space:", 1),
			want: []wantErr{{12, "k.scenarios.agentic-coding[0].dram-utilization", "requires dram-utilization (0, 1]"}}},
		{name: "dram-utilization above one", doc: agenticDoc("cluster:x", "dram-utilization: 1.5", "{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{11, "k.scenarios.agentic-coding[0].dram-utilization", "must be in (0, 1]"}}},
		{name: "dram-utilization zero", doc: agenticDoc("cluster:x", "dram-utilization: 0", "{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{11, "k.scenarios.agentic-coding[0].dram-utilization", "must be in (0, 1]"}}},
		{name: "total-cpu-dram-gb is not a master field", doc: agenticDoc("cluster:x", "dram-utilization: 0.8", "{tp: 8, kv-offloading: dram, kv-offload-backend: {name: native}, total-cpu-dram-gb: 1000, conc-list: [1]}"),
			want: []wantErr{{13, agPath + ".total-cpu-dram-gb", `"total-cpu-dram-gb" is not a master config field`}}},
		{name: "gpus-per-node is not a master field", doc: agenticDoc("cluster:x", "gpus-per-node: 8", "{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{11, "k.scenarios.agentic-coding[0].gpus-per-node", `"gpus-per-node" is not a master config field`}}},
		{name: "available-cpu-dram-mib is not a master field", doc: agenticDoc("cluster:x", "available-cpu-dram-mib: 2964436", "{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{11, "k.scenarios.agentic-coding[0].available-cpu-dram-mib", "runner fact"}}},
		{name: "duration is not a master field", doc: agenticDoc("cluster:x", "duration: 1800", "{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{11, "k.scenarios.agentic-coding[0].duration", "3600"}}},
		{name: "trace-source is not a master field", doc: agenticDoc("cluster:x", "trace-source: weka", "{tp: 8, kv-offloading: none, conc-list: [1]}"),
			want: []wantErr{{11, "k.scenarios.agentic-coding[0].trace-source", "chosen by the recipe"}}},

		// Router.
		{name: "router at both scopes", doc: strings.Replace(fixedDoc("{tp: 8, router: {name: r, version: '1'}, conc-list: [1]}"), "  multinode: false\n", "  multinode: false\n  router: {name: r, version: '1'}\n", 1),
			want: []wantErr{{15, "k.router", "declare it in one place only"}}},
		{name: "router image version", doc: fixedDoc("{tp: 8, router: {name: r, version: 'image:lmsysorg/sglang'}, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".router.version", "is an image reference"}}},
		{name: "router missing version", doc: fixedDoc("{tp: 8, router: {name: vllm-router}, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".router.version", "required key is missing"}}},
		{name: "router extra key", doc: fixedDoc("{tp: 8, router: {name: r, version: '1', mode: rr}, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".router.mode", `unknown key "mode"`}}},
		{name: "router empty name", doc: fixedDoc("{tp: 8, router: {name: '', version: '1'}, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".router.name", "must not be empty"}}},
		{name: "router version as number", doc: fixedDoc("{tp: 8, router: {name: r, version: 1.0}, conc-list: [1]}"),
			want: []wantErr{{14, ssPath + ".router.version", "must be a string, got a number"}}},

		// Multinode.
		{name: "kv-p2p-transfer at both scopes", doc: multiDoc("kv-p2p-transfer: nixl", "kv-p2p-transfer: mooncake", okPrefill, okDecode) + "            conc-list: [1]\n",
			want: []wantErr{{15, "k.kv-p2p-transfer", "declare it in one place only"}}},
		{name: "kv-p2p-transfer empty", doc: multiDoc("disagg: false", "kv-p2p-transfer: ''", okPrefill, okDecode) + "            conc-list: [1]\n",
			want: []wantErr{{15, ssPath + ".kv-p2p-transfer", "must not be empty"}}},
		{name: "kv-p2p-transfer mapping", doc: multiDoc("disagg: false", "kv-p2p-transfer: {name: nixl}", okPrefill, okDecode) + "            conc-list: [1]\n",
			want: []wantErr{{15, ssPath + ".kv-p2p-transfer", "must be a string, got a mapping"}}},
		{name: "disagg without kv-p2p-transfer", doc: multiDoc("disagg: true", "conc-list: [1]", okPrefill, okDecode),
			want: []wantErr{{9, "k.disagg", "disagg: true requires kv-p2p-transfer at the top level or in every search-space entry; the search-space entry at line 15 has none"}}},
		{name: "disagg with partial kv-p2p-transfer", doc: multiDoc("disagg: true", "conc-list: [1]", okPrefill, okDecode) + "          - {conc-list: [2], kv-p2p-transfer: nixl, prefill: " + okPrefill + ", decode: " + okDecode + "}\n",
			want: []wantErr{{9, "k.disagg", "the search-space entry at line 15 has none"}}},
		{name: "multinode tp at entry level", doc: multiDoc("disagg: false", "conc-list: [1]", okPrefill, okDecode) + "            tp: 8\n",
			want: []wantErr{{18, ssPath + ".tp", "inside the prefill and decode worker blocks"}}},
		{name: "multinode missing decode", doc: strings.Replace(multiDoc("disagg: false", "conc-list: [1]", okPrefill, okDecode), "            decode: "+okDecode+"\n", "", 1),
			want: []wantErr{{15, ssPath + ".decode", "required key is missing"}}},
		{name: "worker missing dp-attn", doc: multiDoc("disagg: false", "conc-list: [1]", "{num-worker: 1, tp: 4, ep: 4}", okDecode),
			want: []wantErr{{16, ssPath + ".prefill.dp-attn", "required key is missing"}}},
		{name: "worker extra key", doc: multiDoc("disagg: false", "conc-list: [1]", okPrefill, "{num-worker: 1, tp: 8, ep: 8, dp-attn: true, batch-size: 4}"),
			want: []wantErr{{17, ssPath + ".decode.batch-size", `unknown key "batch-size"`}}},
		{name: "worker dcp-size does not divide tp", doc: multiDoc("disagg: false", "conc-list: [1]", "{num-worker: 1, tp: 4, ep: 4, dp-attn: true, dcp-size: 8}", okDecode),
			want: []wantErr{{16, ssPath + ".prefill.dcp-size", "tp (4) must be divisible by dcp-size (8)"}}},
		{name: "worker pp zero", doc: multiDoc("disagg: false", "conc-list: [1]", "{num-worker: 1, tp: 4, ep: 4, dp-attn: true, pp: 0}", okDecode),
			want: []wantErr{{16, ssPath + ".prefill.pp", "must be >= 1"}}},
		{name: "worker hardware on one side", doc: multiDoc("disagg: false", "conc-list: [1]", "{num-worker: 1, tp: 4, ep: 4, dp-attn: true, hardware: gb200}", okDecode),
			want: []wantErr{{15, ssPath + ".hardware", "both prefill and decode"}}},
		{name: "worker additional-settings not strings", doc: multiDoc("disagg: false", "conc-list: [1]", "{num-worker: 1, tp: 4, ep: 4, dp-attn: true, additional-settings: [1]}", okDecode),
			want: []wantErr{{16, ssPath + ".prefill.additional-settings[0]", "must be a string"}}},
		{name: "multinode agentic pp at entry level", doc: strings.Replace(multiDoc("disagg: false", "conc-list: [1]", okPrefill, okDecode), "fixed-seq-len:\n      - isl: 8192\n        osl: 1024\n", "agentic-coding:\n      - dram-utilization: 0.5\n\n", 1) + "            pp: 2\n",
			want: []wantErr{{5, "k.runner", "cluster:<name>"}, {18, "k.scenarios.agentic-coding[0].search-space[0].pp", "inside the prefill and decode worker blocks"}}},

		// Several problems are all reported, in line order.
		{name: "every problem reported", doc: fixedDoc("{tp: 8, dcp-size: 3, conc-start: 8, conc-end: 4, spec-decoding: eagle}") + "k2: {image: i}\n",
			want: []wantErr{
				{14, ssPath + ".dcp-size", "divisible"},
				{14, ssPath + ".conc-start", "must be <= conc-end"},
				{14, ssPath + ".spec-decoding", "eagle"},
				{15, "k2.model", "required key is missing"},
				{15, "k2.model-prefix", "required key is missing"},
				{15, "k2.runner", "required key is missing"},
				{15, "k2.precision", "required key is missing"},
				{15, "k2.framework", "required key is missing"},
				{15, "k2.multinode", "required key is missing"},
				{15, "k2.scenarios", "required key is missing"},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseMasters(Source{Name: "m.yaml", Data: []byte(tc.doc)})
			assertErrors(t, "m.yaml", err, tc.want)
			if len(tc.want) == 0 {
				require.NotNil(t, m)
				require.Len(t, m.Entries, 1)
			} else {
				assert.Nil(t, m)
			}
		})
	}
}

func TestParseMastersDuplicateAcrossFiles(t *testing.T) {
	doc := fixedDoc("{tp: 8, conc-list: [1]}")
	_, err := ParseMasters(Source{Name: "amd.yaml", Data: []byte(doc)}, Source{Name: "nvidia.yaml", Data: []byte("x: 1\n" + doc)})
	errs := Errors(err)
	require.Len(t, errs, 2, "%v", err)
	assert.Equal(t, "nvidia.yaml:1:4: x: must be a mapping, got an integer", errs[0].Error())
	assert.Equal(t, "nvidia.yaml:2:1: k: key is already defined in amd.yaml:1; keys must be unique across all master config files", errs[1].Error())
}

func TestLoadMastersMissingFile(t *testing.T) {
	_, err := LoadMasters("testdata-does-not-exist.yaml")
	errs := Errors(err)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "testdata-does-not-exist.yaml:1:1: cannot read master config")
}

func TestParseMastersValues(t *testing.T) {
	doc := multiDoc("disagg: true", "{conc-list: [4, 8]}", okPrefill, "{num-worker: 2, tp: 8, ep: 8, dp-attn: false, pp: 2, additional-settings: []}")
	doc = strings.Replace(doc, "          - {conc-list: [4, 8]}\n            prefill:", "          - conc-list: [4, 8]\n            spec-decoding: mtp\n            prefill:", 1)
	doc += "  router: {name: sglang-router, version: \"0.3.2\"}\n"
	doc = strings.Replace(doc, "  disagg: true\n", "  disagg: true\n  kv-p2p-transfer: nixl\n", 1)
	m, err := ParseMasters(Source{Name: "m.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	e, ok := m.Lookup("k")
	require.True(t, ok)
	assert.Equal(t, Pos{File: "m.yaml", Line: 1, Col: 1}, e.Pos)
	assert.True(t, e.Multinode)
	assert.True(t, e.DisaggValue())
	require.NotNil(t, e.KVP2PTransfer)
	assert.Equal(t, "nixl", *e.KVP2PTransfer)
	require.NotNil(t, e.Router)
	assert.Equal(t, "0.3.2", e.Router.Version)
	s := e.Scenarios.FixedSeqLen[0].SearchSpace[0]
	assert.Equal(t, []int{4, 8}, s.ConcList)
	assert.Equal(t, "mtp", s.SpecDecodingValue())
	assert.True(t, s.IsMultinode())
	assert.Nil(t, s.TP)
	assert.Nil(t, s.Prefill.AdditionalSettings, "absent additional-settings stays nil")
	assert.Equal(t, []string{}, s.Decode.AdditionalSettings, "given empty additional-settings is non-nil")
	assert.Equal(t, 2, s.Decode.PPValue())
	assert.Equal(t, 1, s.Prefill.PPValue())
	assert.Equal(t, []string{"num-worker", "tp", "ep", "dp-attn", "pp", "additional-settings"}, s.Decode.Keys)

	m, err = ParseMasters(Source{Name: "f.yaml", Data: []byte(fixedDoc("{tp: 8, ep: 1, conc-start: 4, conc-end: 64}"))})
	require.NoError(t, err)
	s = m.Entries[0].Scenarios.FixedSeqLen[0].SearchSpace[0]
	require.NotNil(t, s.EP)
	assert.Equal(t, 1, *s.EP)
	assert.Nil(t, s.DPAttn, "absent dp-attn stays nil")
	assert.Nil(t, s.ConcList)
	assert.Equal(t, 4, *s.ConcStart)
	assert.Equal(t, 64, *s.ConcEnd)
	assert.Equal(t, "none", s.SpecDecodingValue())
	assert.False(t, m.Entries[0].DisaggValue())
	assert.Nil(t, m.Entries[0].Disagg)
}

// TestParseMastersMergeKeys checks YAML merge keys, which PyYAML (and so
// InferenceX) honours: merged keys fill in, written keys win.
func TestParseMastersMergeKeys(t *testing.T) {
	doc := strings.Replace(fixedDoc("{tp: 8, conc-list: [1]}"), "k:\n", "k: &base\n", 1) +
		"k2:\n  <<: *base\n  runner: mi300x\n" +
		"k3:\n  <<: [{image: other}, *base]\n  framework: vllm\n"
	m, err := ParseMasters(Source{Name: "m.yaml", Data: []byte(doc)})
	require.NoError(t, err)
	require.Equal(t, []string{"k", "k2", "k3"}, m.Keys())
	k2, _ := m.Lookup("k2")
	assert.Equal(t, "mi300x", k2.Runner)
	assert.Equal(t, "img", k2.Image)
	assert.Equal(t, 14, k2.Scenarios.FixedSeqLen[0].SearchSpace[0].Pos.Line, "merged values keep their own position")
	k3, _ := m.Lookup("k3")
	assert.Equal(t, "other", k3.Image, "the first merged mapping wins")
	assert.Equal(t, VLLM, k3.Framework)

	// A duplicate written key is still an error even with a merge.
	_, err = ParseMasters(Source{Name: "m.yaml", Data: []byte(doc + "  framework: sglang\n")})
	assertErrors(t, "m.yaml", err, []wantErr{{21, "k3.framework", "duplicate key (first defined at line 20)"}})
}
