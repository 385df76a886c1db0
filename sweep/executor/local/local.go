// Package local runs a sweep's arms on this node: each arm gets its own
// GPUs (never two arms on one GPU), and arms that fit run at once, four
// TP2 arms on an 8-GPU node for example.
//
//	ex := &local.Executor{GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}, Backend: backend}
//	sum, err := campaign.Run(ctx, campaign.Options{Executor: ex, ...})
package local

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"sweep/sweep/campaign"
)

// Executor places arms on the node's GPUs in schedule order and runs each
// with campaign.RunArm. When the next arm does not fit the free GPUs, a
// later arm that fits goes first (backfill); an arm that needs more GPUs
// than the node has fails without starting.
type Executor struct {
	// GPUs are the node's GPU ids.
	GPUs []int
	// MaxParallel bounds the arms running at once (0: as many as fit).
	MaxParallel int
	Backend     campaign.Backend
	Arm         campaign.ArmOptions
	// RunArm, when set, runs an arm on its GPUs instead of campaign.RunArm
	// with Backend (ContainerArms.Run: the arm in its runner's container).
	RunArm func(ctx context.Context, job campaign.Job, gpus []int, obs campaign.Observer)
}

// Execute runs jobs until each has ended or ctx is cancelled.
func (e *Executor) Execute(ctx context.Context, jobs []campaign.Job, obs campaign.Observer) error {
	if len(e.GPUs) == 0 {
		return fmt.Errorf("local executor: no GPUs to run on")
	}
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		free    = slices.Clone(e.GPUs)
		running int
		wg      sync.WaitGroup
	)
	slices.Sort(free)
	pending := slices.Clone(jobs)
	for _, j := range pending {
		if j.Arm.GPUs > len(e.GPUs) {
			for _, p := range j.Points {
				obs(campaign.Record{Event: campaign.EventPointStart, Arm: j.Arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc()})
				obs(campaign.Record{Event: campaign.EventPointEnd, Arm: j.Arm.Index + 1, Point: p.ID, Index: p.Index + 1, Conc: p.Conc(),
					Status: campaign.StatusFailed, Error: fmt.Sprintf("the arm needs %d GPUs; this node has %d (%v)", j.Arm.GPUs, len(e.GPUs), e.GPUs)})
			}
		}
	}
	pending = slices.DeleteFunc(pending, func(j campaign.Job) bool { return j.Arm.GPUs > len(e.GPUs) })
	// Wake the scheduler when ctx is cancelled, so it stops placing arms.
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
	})
	defer stop()
	mu.Lock()
	for len(pending) > 0 && ctx.Err() == nil {
		i := e.next(pending, len(free), running)
		if i < 0 {
			cond.Wait()
			continue
		}
		job := pending[i]
		pending = slices.Delete(pending, i, i+1)
		n := need(job.Arm)
		gpus := slices.Clone(free[:n])
		free = free[n:]
		running++
		wg.Add(1)
		go func() {
			defer wg.Done()
			if e.RunArm != nil {
				e.RunArm(ctx, job, gpus, obs)
			} else {
				campaign.RunArm(ctx, job, gpus, e.Backend, obs, e.Arm)
			}
			mu.Lock()
			free = append(free, gpus...)
			slices.Sort(free)
			running--
			cond.Broadcast()
			mu.Unlock()
		}()
	}
	mu.Unlock()
	wg.Wait()
	return nil
}

// need is how many GPUs the arm holds while it runs.
func need(a *campaign.Arm) int { return max(a.GPUs, 1) }

// next is the placement rule: the index of the first pending job that
// fits the free GPUs, or -1 when none fits or MaxParallel arms run.
func (e *Executor) next(pending []campaign.Job, free, running int) int {
	if e.MaxParallel > 0 && running >= e.MaxParallel {
		return -1
	}
	return slices.IndexFunc(pending, func(j campaign.Job) bool { return need(j.Arm) <= free })
}

// Wall is the wall time in seconds of arms that take the given seconds
// each, placed as Execute places them (in order, a later arm that fits
// going first, an arm larger than the node skipped): the dry run's
// estimate and the run share this rule. It fits campaign.Packer.
func (e *Executor) Wall(arms []*campaign.Arm, seconds []float64) float64 {
	type run struct {
		end  float64
		gpus int
	}
	var pending []campaign.Job
	length := map[*campaign.Arm]float64{}
	for i, a := range arms {
		if a.GPUs <= len(e.GPUs) {
			pending = append(pending, campaign.Job{Arm: a})
			length[a] = seconds[i]
		}
	}
	free := len(e.GPUs)
	var running []run
	now, wall := 0.0, 0.0
	for len(pending) > 0 {
		i := e.next(pending, free, len(running))
		if i < 0 {
			if len(running) == 0 {
				break // cannot happen: every pending arm fits the empty node
			}
			j := 0
			for k := range running {
				if running[k].end < running[j].end {
					j = k
				}
			}
			now = max(now, running[j].end)
			free += running[j].gpus
			running = slices.Delete(running, j, j+1)
			continue
		}
		a := pending[i].Arm
		pending = slices.Delete(pending, i, i+1)
		free -= need(a)
		end := now + length[a]
		running = append(running, run{end: end, gpus: need(a)})
		wall = max(wall, end)
	}
	return wall
}
