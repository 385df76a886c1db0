package loadgen

import "sweep/metrics/aiperf"

// inputConfig is input_config in aiperf 0.12.0's sections (models,
// endpoint, datasets, phases, artifacts, tokenizer, gpu_telemetry,
// server_metrics, network_latency, otel, mlflow, wandb, runtime and, with
// a scenario, scenario and unsafe_override), from the options.
func (r *runner) inputConfig() object {
	o := &r.o
	endpoint := object{
		{"urls", []string{o.URL}}, {"type", "chat"}, {"path", o.Endpoint},
		{"streaming", o.Streaming}, {"use_server_token_count", o.ServerTokens},
	}
	ds := object{{"name", "main"}}
	switch {
	case o.PublicDataset != "":
		ds = append(ds, field{"type", "public"}, field{"dataset", o.PublicDataset})
	case o.TraceFile != "":
		ds = append(ds, field{"type", "file"}, field{"path", o.TraceFile})
	default:
		ds = append(ds, field{"type", "builtin"}, field{"dataset", r.ds.Loader})
	}
	if o.DatasetEntries > 0 {
		ds = append(ds, field{"entries", o.DatasetEntries})
	}
	ds = append(ds, field{"random_seed", o.Seed})
	common := func(p object) object {
		if o.FailThreshold >= 0 {
			p = append(p, field{"failed_request_threshold", rawFloat(o.FailThreshold)})
		}
		return append(p, field{"trajectory_start_min_ratio", rawFloat(o.StartMinRatio)}, field{"trajectory_start_max_ratio", rawFloat(o.StartMaxRatio)})
	}
	var phases []object
	if o.WarmupPerLane > 0 {
		w := object{{"name", aiperf.PhaseWarmup}, {"kind", aiperf.PhaseWarmup}, {"type", "concurrency"}, {"exclude_from_results", true}}
		if o.WarmupRequests > 0 {
			w = append(w, field{"requests", o.WarmupRequests})
		}
		w = common(append(w, field{"concurrency", o.Concurrency}))
		if o.WarmupGrace > 0 {
			w = append(w, field{"agentic_warmup_grace_period", rawFloat(o.WarmupGrace.Seconds())})
		}
		phases = append(phases, w)
	}
	p := object{{"name", aiperf.PhaseProfiling}, {"kind", aiperf.PhaseProfiling}, {"type", "concurrency"}}
	if o.BenchmarkDuration > 0 {
		p = append(p, field{"duration", rawFloat(o.BenchmarkDuration.Seconds())})
	}
	if o.RequestCount > 0 {
		p = append(p, field{"requests", o.RequestCount})
	}
	p = append(p, field{"concurrency", o.Concurrency}, field{"grace_period", rawFloat(o.GracePeriod.Seconds())}, field{"timing_mode", "agentic_replay"})
	p = common(p)
	if o.SystemIdleCap > 0 {
		p = append(p, field{"system_idle_gap_cap_seconds", rawFloat(o.SystemIdleCap.Seconds())})
	}
	if o.WarmupGrace > 0 {
		p = append(p, field{"agentic_warmup_grace_period", rawFloat(o.WarmupGrace.Seconds())})
	}
	phases = append(phases, p)
	tok := object{}
	if o.Tokenizer != "" {
		tok = append(tok, field{"name", o.Tokenizer})
	}
	tok = append(tok, field{"trust_remote_code", o.TrustRemoteCode}, field{"apply_chat_template", o.ApplyChatTemplate})
	sm := object{{"enabled", !o.NoServerMetrics}}
	if eps := metricsEndpoints(o); len(eps) > 0 {
		sm = append(sm, field{"urls", eps}, field{"formats", []string{"json", "csv"}})
	}
	ic := object{
		{"models", object{{"items", []object{{{"name", o.Model}}}}}},
		{"endpoint", endpoint},
		{"datasets", []object{ds}},
		{"phases", phases},
		{"artifacts", object{{"dir", o.ArtifactDir}, {"slice_duration", rawFloat(o.SliceDuration.Seconds())}, {"auto_plot", false}, {"plot_required", false}}},
		{"tokenizer", tok},
		{"gpu_telemetry", object{{"enabled", false}}},
		{"server_metrics", sm},
		{"network_latency", object{{"enabled", false}}},
		{"otel", object{}}, {"mlflow", object{}}, {"wandb", object{}},
		{"runtime", object{{"ui", "none"}, {"stats_interval", rawFloat(o.StatsInterval.Seconds())}}},
	}
	if o.Scenario != "" {
		ic = append(ic, field{"scenario", o.Scenario}, field{"unsafe_override", o.UnsafeOverride})
	}
	return ic
}
