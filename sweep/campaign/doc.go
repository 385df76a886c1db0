// Package campaign runs a sweep: many benchmark points grouped into arms
// (points of one config key and search-space entry that differ only in
// concurrency), each arm run in a row against one server where the recipe
// allows, resumable from an append-only journal.
//
//	sched, _ := campaign.BuildSchedule(points, campaign.ScheduleOptions{})
//	ex := &local.Executor{GPUs: gpus, Backend: &campaign.RunBackend{Dir: dir, Setup: setup}}
//	sum, err := campaign.Run(ctx, campaign.Options{Dir: dir, Schedule: sched, Executor: ex, Identity: id})
//	fmt.Print(sum.Table())
//
// Executors place arms and call RunArm, which starts servers through a
// Backend (RunBackend: sweep/run on this machine) and runs each point's
// load: sweep/executor/local packs arms onto this node's GPUs,
// sweep/executor/slurm submits one job per arm whose node runs RunArm
// from an ArmJob file and reports through an EventLog. ArmOptions.Choose
// with Adaptive runs only the points knee.Next asks for.
package campaign
