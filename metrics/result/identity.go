package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sweep/configs/matrix"
)

// IdentityKeys are the result fields that name an arm (one parallelism
// config of one config key), in the order they are printed. Files that
// agree on all of them are one arm; everything else (conc, measurements,
// image, runner node) may differ.
//
// The keys from "prefill_num_workers" on are a multi-node result's
// deployment (MultiNodeShape: workers and parallelism per role); a
// single-node result has none of them. They are sweep's own: InferenceX's
// result keeps "tp" as prefill_tp + decode_tp and "ep" as the larger of
// the two (applyShape, checked by the aggregation conformance cases), so
// a 1P1D and a 1P2D deployment of tp8 workers both read "tp16", and
// without the shape their points at one concurrency would be one arm:
// compare would pair them and average them as replicates, the knees
// would read them as one curve.
var IdentityKeys = [identityLen]string{
	"infmax_model_prefix", "hw", "framework", "precision", "spec_decoding", "scenario_type",
	"disagg", "is_multinode", "tp", "ep", "dp_attention", "kv_offloading", "pp",
	"prefill_num_workers", "prefill_tp", "prefill_pp", "prefill_dcp_size", "prefill_pcp_size", "prefill_ep", "prefill_dp_attention",
	"decode_num_workers", "decode_tp", "decode_pp", "decode_dcp_size", "decode_pcp_size", "decode_ep", "decode_dp_attention",
}

const (
	identityLen = 27
	// shapeKeyStart is the index of the first multi-node shape key in
	// IdentityKeys; MarshalJSON leaves those a result lacks out, so a
	// single-node identity is written as before they were added.
	shapeKeyStart = 13
	// groupKeyCount is how many leading IdentityKeys name the config key
	// an arm belongs to (model prefix, hardware, framework, precision,
	// spec decoding, scenario, disagg, multinode): the arms a Pareto
	// frontier compares.
	groupKeyCount = 8
	// labelKeyCount is how many leading IdentityKeys GroupLabel prints.
	labelKeyCount = 6
)

// Identity holds the IdentityKeys values of an arm as they appear in a
// result file (raw JSON; nil when the file lacks the key), indexed like
// IdentityKeys.
type Identity [identityLen]json.RawMessage

// identityOf takes the identity of a result file from its top-level
// values.
func identityOf(top map[string]json.RawMessage) Identity {
	var id Identity
	for i, k := range IdentityKeys {
		if raw, ok := top[k]; ok {
			id[i] = raw
		}
	}
	return id
}

// MarshalJSON writes the identity as an object in IdentityKeys order;
// the multi-node shape keys only where the identity has them.
func (id Identity) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range IdentityKeys {
		if i >= shapeKeyStart && textOf(id[i]) == "" {
			continue
		}
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if id[i] == nil {
			b.WriteString("null")
		} else {
			b.Write(id[i])
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object MarshalJSON writes; keys other than
// IdentityKeys are errors.
func (id *Identity) UnmarshalJSON(data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	for k := range top {
		if !slices.Contains(IdentityKeys[:], k) {
			return fmt.Errorf("arm identity: unknown key %q (want %s)", k, strings.Join(IdentityKeys[:], ", "))
		}
	}
	*id = identityOf(top)
	for i := range id {
		if string(id[i]) == "null" {
			id[i] = nil
		}
	}
	return nil
}

// Get returns the value of key as text: a JSON string unquoted, anything
// else as written; "" when absent or null.
func (id Identity) Get(key string) string {
	i := slices.Index(IdentityKeys[:], key)
	if i < 0 {
		return ""
	}
	return textOf(id[i])
}

func textOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// key is the grouping key over the first n identity fields: values are
// compared as text, so "false" and false (InferenceX writes dp_attention
// as a string) are the same arm.
func (id Identity) key(n int) string {
	parts := make([]string, n)
	for i := range n {
		parts[i] = textOf(id[i])
	}
	return strings.Join(parts, "\x00")
}

// ArmKey is a text key equal for two identities exactly when they name
// the same arm.
func (id Identity) ArmKey() string { return id.key(identityLen) }

// SummedArmKey is ArmKey without the multi-node shape: the arm as
// InferenceX's result fields alone name it (a multi-node arm by its
// summed TP, largest EP and either role's DP attention). Two arms with
// one SummedArmKey and different ArmKeys are two deployments of one
// config key, say 1P1D and 1P2D of tp8 workers.
func (id Identity) SummedArmKey() string { return id.key(shapeKeyStart) }

// GroupKey is a text key equal for two identities exactly when their arms
// belong to the same config key (model prefix, hardware, framework,
// precision, spec decoding, scenario, disagg, multinode): the arms a
// Pareto frontier compares.
func (id Identity) GroupKey() string { return id.key(groupKeyCount) }

// Label is a short human name of the arm: "qwen3.5 mi325x sglang fp8 mtp
// tp8 ep8 dpa kv:none" (defaults such as pp1 left out).
func (id Identity) Label() string {
	var parts []string
	for _, k := range []string{"infmax_model_prefix", "hw", "framework", "precision", "spec_decoding"} {
		if v := id.Get(k); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(append(parts, id.Parallelism()), " ")
}

// Parallelism names the arm inside its config key: "tp8 ep8 dpa kv:dram";
// a multi-node arm by its deployment, workers per role and each role's
// parallelism: "1P×tp8 2D×tp8·ep8·dpa kv:dram disagg" (an aggregated
// multi-node arm, with no decode workers: "2×tp8·ep8·dpa").
func (id Identity) Parallelism() string {
	var parts []string
	if id.Get("prefill_num_workers") != "" {
		parts = id.roles()
	} else {
		parts = []string{"tp" + id.Get("tp")}
		if ep := id.Get("ep"); ep != "" && ep != "1" {
			parts = append(parts, "ep"+ep)
		}
		if id.Get("dp_attention") == "true" {
			parts = append(parts, "dpa")
		}
		if pp := id.Get("pp"); pp != "" && pp != "1" {
			parts = append(parts, "pp"+pp)
		}
	}
	if kv := id.Get("kv_offloading"); kv != "" && kv != "none" {
		parts = append(parts, "kv:"+kv)
	}
	if id.Get("disagg") == "true" {
		parts = append(parts, "disagg")
	}
	return strings.Join(parts, " ")
}

// roles names a multi-node arm's workers: "1P×tp8" and "2D×tp8·ep8·dpa"
// (sizes of 1 and no DP attention left out), or "2×tp8" alone when it
// has no decode workers (an aggregated deployment).
func (id Identity) roles() []string {
	role := func(prefix, letter string) string {
		s := id.Get(prefix+"num_workers") + letter + "×tp" + id.Get(prefix+"tp")
		for _, k := range []string{"ep", "pp", "dcp_size", "pcp_size"} {
			if v := id.Get(prefix + k); v != "" && v != "1" {
				s += "·" + strings.TrimSuffix(k, "_size") + v
			}
		}
		if id.Get(prefix+"dp_attention") == "true" {
			s += "·dpa"
		}
		return s
	}
	if w := id.Get("decode_num_workers"); w == "" || w == "0" {
		return []string{role("prefill_", "")}
	}
	return []string{role("prefill_", "P"), role("decode_", "D")}
}

// GroupLabel names the config key side of the arm (no parallelism).
func (id Identity) GroupLabel() string {
	var parts []string
	for _, k := range IdentityKeys[:labelKeyCount] {
		if v := id.Get(k); v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

// Identity is the arm identity a result of these facts carries: the
// IdentityKeys values Aggregate writes.
func (f RunFacts) Identity() Identity {
	res, _ := newResult(f)
	// The identity fields are strings, numbers and booleans: they always
	// marshal (an error would leave the identity empty).
	data, _ := json.Marshal(res)
	var top map[string]json.RawMessage
	_ = json.Unmarshal(data, &top)
	return identityOf(top)
}

// RowIdentity is the arm identity of a matrix row: the identity of the
// results its points write (FactsFromRow), so an arm planned from rows
// and the same arm read back from its result files have one label.
func RowIdentity(row *matrix.Row) Identity {
	return FactsFromRow(row, "", nil, 0).Identity()
}

// PointLabel names one point of the arm: "tp8 ep8 dpa kv:dram c32" (the
// arm inside its config key, then the concurrency).
func (id Identity) PointLabel(conc int) string {
	return fmt.Sprintf("%s c%d", id.Parallelism(), conc)
}
