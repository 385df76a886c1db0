// Package campaign runs a sweep: many benchmark points grouped into arms
// (points of one config key and search-space entry that differ only in
// concurrency), each arm run in a row against one server where the recipe
// allows, resumable from an append-only journal.
//
//	sched, _ := campaign.BuildSchedule(points, campaign.ScheduleOptions{})
//	sum, err := campaign.Run(ctx, campaign.Options{Dir: dir, Schedule: sched, Executor: ex, Identity: id})
//	fmt.Print(sum.Table())
//
// Executors (sweep/executor/local today) place arms and call RunArm, which
// starts servers through a Backend and runs each point's load.
//
// Status: work in progress; the cost model, the local executor, the
// discover/official commands and the fault tests are not written yet.
package campaign
