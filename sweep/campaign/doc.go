// Package campaign plans, prices and runs a sweep: many benchmark points
// grouped into arms (points of one config key and search-space entry that
// differ only in concurrency), each arm run in a row against one server
// where the recipe allows, resumable from an append-only journal.
//
//	rows = campaign.Selection{TP: []int{8}}.Select(rows)
//	sched, _ := campaign.Plan(rows, dir, campaign.PlanOptions{Recipe: po})
//	ours, theirs := campaign.PlannedCost(0).Estimate(sched, node.Wall) // node: a *local.Executor
//	ex, _ := executor.New(executor.Options{Name: executor.Local, Dir: dir, Schedule: sched, ...})
//	sum, err := campaign.Run(ctx, campaign.Options{Dir: dir, Schedule: sched, Executor: ex, Identity: id})
//	fmt.Print(sum.Table())
//
// Plan plans the points twice (names and arms, then each point into its
// directory on its arm's port, with adaptive probe clients) and
// BuildSchedule decides the server starts. Cost predicts point, arm and
// schedule times (planned, or measured from an earlier journal) and each
// point's watchdog; the wall time of a schedule comes from the executor's
// own placement (local.Executor.Wall). Executors place arms and call
// RunArm, which starts servers through a Backend (RunBackend: sweep/run
// on this machine) and runs each point's load: sweep/executor/local packs
// arms onto this node's GPUs, sweep/executor/slurm submits one job per arm
// whose node runs RunArm from an ArmJob file and reports through an
// EventLog; sweep/executor picks one by name. ArmOptions.Choose with
// Adaptive runs only the points knee.Next asks for, reading each point's
// last run, this invocation's or (Job.Earlier, which Run gives each job
// from its replay of the journal) an earlier one's, alike; Run, given the
// same function (Options.Choose), resumes an arm whose points are all
// done while it still asks for one of them (a probe, complete or failed,
// at the full length: the sweep was killed before that run); an arm
// whose search asks for no more points records so (EventSearchEnd),
// each point the search asks for carries why (Point.Why: its point_start
// record's Reason and progress line), and ArmOptions.Ended with
// AdaptiveEnd says why it needs none of the others (their point_skip
// records) and the verdict it ends on (the search_end's); the end record
// tells ReadCoverage a finished search from one killed between two
// steps, and Run when a point that failed in the search's pass may be
// retried (a resume goes on with a killed pass first, reading the point
// as failed); each sweep_start, a new sweep's or a resume's, gives the
// format of the records that follow (JournalFormat), so a journal that
// an older binary began is read per segment. A backend clears a point's
// directory before each attempt with ClearPointDir, which keeps the
// result of a probe that the point's full-length run replaces
// (result.ProbeDir: DIR/ID.probe/) and takes the directory's lock for
// the attempt (run.LockOutDir). A resume recovers from disk a point
// the journal started and never ended whose directory says it finished
// (Record.Recovered); a new sweep starts only in an empty directory (one
// with no journal record that holds anything is refused, as the sweep
// would read its results as its own); Preview is what Run would find in
// a directory, without writing anything (a dry run's). Identity is what makes two
// invocations the same sweep, its settings compared by meaning (IntSet,
// Paths, Setting.Unused, EnvSetting).
// A point that failed for want of space on the sweep directory's disk,
// or on another one that stays full such as /dev/shm (run.DiskFullError,
// Record.DiskFull, DiskElsewhere), stops the sweep (DiskFullError);
// that failure is not the point's and counts no attempt: a resume runs
// the point again with its retries intact.
package campaign
