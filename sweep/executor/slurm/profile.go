package slurm

import (
	"strconv"
	"time"

	"sweep/recipes"
	"sweep/sweep/campaign"
)

// ProfileSpec returns Executor.Spec from the arms' runner profiles
// (partition, account, --exclusive, --mem=0, --cpus-per-task), as profile
// (nil: recipes.ProfileFor) gives them. A simulated engine needs no
// exclusive node or CPU allocation, so the profile applies only with
// apply (real engines, launched arms); partition, when set, overrides the
// profile's.
func ProfileSpec(profile func(runner string) (recipes.Profile, error), apply bool, partition string) func(*campaign.Arm) JobSpec {
	if profile == nil {
		profile = recipes.ProfileFor
	}
	return func(a *campaign.Arm) JobSpec {
		var spec JobSpec
		if prof, err := profile(a.Runner); err == nil && apply {
			spec.Partition = prof.Slurm.Partition
			if prof.Slurm.Account != "" {
				spec.Options = append(spec.Options, "--account="+prof.Slurm.Account)
			}
			if prof.Slurm.Exclusive {
				spec.Options = append(spec.Options, "--exclusive")
			}
			if prof.Slurm.MemAll {
				spec.Options = append(spec.Options, "--mem=0")
			}
			if prof.Slurm.CPUsPerTask > 0 {
				spec.Options = append(spec.Options, "--cpus-per-task="+strconv.Itoa(prof.Slurm.CPUsPerTask))
			}
		}
		if partition != "" {
			spec.Partition = partition
		}
		return spec
	}
}

// WatchdogTimeLimit returns Executor.TimeLimit from the points' watchdog:
// the sum of the job's point bounds (twice their planned time) plus ten
// minutes.
func WatchdogTimeLimit(watchdog func(*campaign.Point) time.Duration) func(campaign.Job) time.Duration {
	return func(j campaign.Job) time.Duration {
		var sec float64
		for _, p := range j.Points {
			sec += watchdog(p).Seconds()
		}
		return time.Duration(sec*float64(time.Second)) + 10*time.Minute
	}
}
