package result

import (
	"strconv"

	"sweep/configs"
	"sweep/configs/matrix"
)

// FactsFromRow gives the aggregate JSON the same identity and topology
// that InferenceX's workflow passes through environment variables
// (benchmark-tmpl.yml) for a matrix row.
func FactsFromRow(row *matrix.Row, resultFilename string, goldenAL *float64, alTolerance float64) RunFacts {
	f := RunFacts{
		RunnerType:        row.Runner,
		Conc:              row.Conc,
		Image:             row.Image,
		RecipeFingerprint: row.RecipeFingerprint,
		Model:             row.Model,
		ModelPrefix:       row.ModelPrefix,
		Framework:         row.Framework,
		Precision:         row.Precision,
		SpecDecoding:      row.SpecDecoding,
		Disagg:            row.Disagg,
		Multinode:         row.Kind.MultiNode(),
		TP:                row.TP,
		EP:                row.EP,
		DPAttention:       strconv.FormatBool(row.DPAttn),
		PP:                row.PP,
		DCP:               row.DCPSize,
		PCP:               row.PCPSize,
		KVOffloading:      row.KVOffloading,
		TotalCPUDRAMGB:    row.TotalCPUDRAMGB,
		KVP2PTransfer:     row.KVP2PTransfer,
		ResultFilename:    resultFilename,
		GoldenAL:          goldenAL,
		ALTolerance:       alTolerance,
	}
	if f.SpecDecoding == "" {
		f.SpecDecoding = "none"
	}
	if f.KVOffloading == "" {
		f.KVOffloading = "none"
	}
	if b := row.KVOffloadBackend; b != nil {
		f.KVOffloadBackend = b.Name
		f.KVOffloadBackendMeta = &configs.Component{Name: b.Name}
		if b.Version != nil {
			f.KVOffloadBackendMeta.Version = *b.Version
		}
	}
	if r := row.Router; r != nil {
		f.Router = &configs.Component{Name: r.Name, Version: r.Version}
	}
	if row.Kind.MultiNode() {
		if len(row.Concs) > 0 {
			f.Conc = row.Concs[0]
		}
		f.Prefill, f.Decode = workerShape(row.Prefill), workerShape(row.Decode)
	}
	return f
}

func workerShape(w *matrix.Worker) WorkerShape {
	if w == nil {
		return WorkerShape{}
	}
	return WorkerShape{NumWorkers: w.NumWorker, TP: w.TP, PP: w.PP, DCP: w.DCPSize, PCP: w.PCPSize, EP: w.EP, DPAttention: strconv.FormatBool(w.DPAttn)}
}
