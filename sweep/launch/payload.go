package launch

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"sweep/configs/matrix"
	"sweep/internal/selfexe"
	"sweep/internal/usage"
	"sweep/recipes"
)

// SweepDir is where the sweep binary's directory is mounted in the
// container (read-only): the payload runs the same static binary, so no
// image is rebuilt.
const SweepDir = "/opt/sweep"

// PlanFile is the planned point the container's sweep runs, relative to
// the workspace (written by the host after the allocation, when the port
// is known).
const PlanFile = ".sweep-launch/plan.json"

// SweepMount mounts the directory of the sweep binary at SweepDir.
func SweepMount(binary string) string { return filepath.Dir(binary) + ":" + SweepDir + ":ro" }

// SweepPayload is the container command that runs a planned point with the
// mounted sweep: sweep run --plan WS/PlanFile --out WS --force, plus extra
// flags (the client, the simulation). --force: the host has checked the
// output directory (run.ClaimOutDir) before allocating; its only files
// are then the plan's.
func SweepPayload(binary, workspace string, extra ...string) []string {
	argv := []string{path.Join(SweepDir, filepath.Base(binary)), "run", "--plan", path.Join(workspace, PlanFile), "--out", workspace, "--force"}
	return append(argv, extra...)
}

// OutTag stands for the instance tag of a docker point's container
// (DirTag of sweep run --launch's --out) in a launch planned without its
// workspace (sweep plan without --workspace).
const OutTag = "${OUT_TAG}"

// PointOptions are the launch options of a planned point the mounted
// sweep runs in the container (sweep run --launch, and sweep plan's
// launch of it): the payload, sweep run --plan in the container's
// workspace with the extra flags, the sweep's mount and export, and on a
// docker runner the instance tag of the workspace (DirTag), so points run
// into different directories never share, and so never remove, a
// container. workspace "" is ${GITHUB_WORKSPACE}, its tag OutTag.
func PointOptions(p recipes.Profile, row *matrix.Row, runner, workspace, binary string, extra ...string) Options {
	o := Options{RunnerName: runner, Workspace: workspace, Payload: SweepPayload(binary, ContainerWorkspace(p, row), extra...),
		Mounts: []string{SweepMount(binary)}, Export: []string{SweepExport(binary)}}
	if p.Launch.Docker != nil {
		o.Instance = OutTag
		if workspace != "" {
			o.Instance = DirTag(workspace)
		}
	}
	return o
}

// PointPort is the engine port a launch on runner binds (the launcher's
// PORT) as known before allocating: known is false where it derives from
// the job id, known once allocated (the point is then planned on it).
func PointPort(p recipes.Profile, runner, jobID string) (port int, known bool) {
	if p.Launch.Docker != nil {
		return recipes.DefaultPort, true // the launcher's -e PORT=8888
	}
	n, err := strconv.Atoi(PortOf(p.Launch.Port, jobID, runner))
	if err != nil {
		return recipes.DefaultPort, false
	}
	return n, true
}

// PlanPoints plans every point again as `sweep run --launch` runs it on
// runner (whose profile is prof), with po the options they were planned
// with, and fills its Launch: the point's results go to the container's
// workspace and its engine listens on the launcher's port; the host
// commands run the mounted sweep binary on it. workspace is the host
// directory mounted on the container's workdir ("": ${GITHUB_WORKSPACE}).
// Its LaunchNotes say what is known only at launch: a port derived from
// the job id, the flags of sweep run --launch, the container's tag.
func PlanPoints(points []recipes.Point, po recipes.PlanOptions, prof recipes.Profile, runner, workspace, binary string) error {
	for i := range points {
		row := points[i].Row
		lo := PointOptions(prof, &row, runner, workspace, binary)
		pl, err := Build(prof, &row, lo)
		if err != nil {
			return fmt.Errorf("%s: %w", row.ConfigKey, err)
		}
		po := po
		po.ResultDir = ContainerWorkspace(prof, &row)
		port, known := PointPort(prof, runner, "")
		po.Port = port
		planned, err := recipes.Plan(matrix.Matrix{&row}, po)
		if err != nil {
			return fmt.Errorf("%s on %s: %w", row.ConfigKey, runner, err)
		}
		p := &planned[0]
		p.Launch = pl.Commands
		p.LaunchNotes = pl.Notes
		if !known {
			p.LaunchNotes = append(p.LaunchNotes, fmt.Sprintf("the engine's port is the launcher's ${PORT} (%s), known once allocated: the container's sweep plans the point again on it, so the port %d of the engine, router and client commands above becomes ${PORT} (and the ports derived from it move with it)",
				pl.Derived["PORT"], port))
		}
		if lo.Instance == OutTag {
			p.LaunchNotes = append(p.LaunchNotes, "${OUT_TAG} in the container's name is 8 hex digits of the SHA-256 of sweep run --launch's absolute --out (--workspace gives it here)")
		}
		p.LaunchNotes = append(p.LaunchNotes, "sweep run --launch adds its own flags to the container's sweep run: --simulate and the simulation's, --builtin-client or --aiperf, --ready-timeout, --failed-request-threshold, --al-tolerance, --stop-grace")
		points[i] = *p
	}
	return nil
}

// SweepExport names the mounted sweep for the sweep in the container
// (SWEEP_EXECUTABLE): it starts itself for its simulated processes, not
// the binary a host's SWEEP_EXECUTABLE names (srun --export=ALL would
// carry that into the container, where it does not exist).
func SweepExport(binary string) string {
	return selfexe.Env + "=" + path.Join(SweepDir, filepath.Base(binary))
}

// SweepBinary is the sweep a launch mounts into the image (given, else
// this one), as an absolute path to a file; a path that is not a file is
// a usage error naming --sweep-binary.
func SweepBinary(given string) (string, error) {
	bin := given
	if bin == "" {
		var err error
		if bin, err = selfexe.Path(); err != nil {
			return "", err
		}
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return "", usage.Errorf("--sweep-binary %s: not a file", bin)
	}
	return bin, nil
}
