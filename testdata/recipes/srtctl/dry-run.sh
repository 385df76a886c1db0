#!/bin/bash
# Renders InferenceX's srt-slurm recipe with srtctl dry-run from source at REF (see
# testdata/README.md). Needs the srt-slurm and InferenceX mirrors, PyYAML, jinja2, pydantic 2 and
# Debian's python3-marshmallow, -marshmallow-dataclass, -rich, -ruamel.yaml, -typeguard, -packaging
# on SRTCTL_DEPS (a folder of symlinks). Not run by tests.
# usage: dry.sh REF OVERLAY_SUBDIR CONFIG GPUS_PER_NODE
set -e
ref=$1 overlay=$2 config=$3 gpn=$4
d=${WORK:-/tmp/srtctl-dry}/ref-$ref
if [ ! -d $d ]; then mkdir -p $d; git --git-dir=/work/.mirror/NVIDIA+srt-slurm/repo archive $ref | tar x -C $d; fi
rm -rf $d/recipes/_ix; mkdir -p $d/$(dirname recipes/$overlay)
(cd /work/.mirror/SemiAnalysisAI+InferenceX/repo && git archive 843c6254f benchmarks/multi_node/srt-slurm-recipes/$overlay) | tar x -C ${WORK:-/tmp/srtctl-dry}
rm -rf $d/recipes/$overlay; cp -r ${WORK:-/tmp/srtctl-dry}/benchmarks/multi_node/srt-slurm-recipes/$overlay $d/recipes/$overlay
path=$(python3 -c "import yaml,sys; print(yaml.safe_load(open('$d/$config'))['model']['path'])")
cont=$(python3 -c "import yaml,sys; print(yaml.safe_load(open('$d/$config'))['model']['container'])")
cat > $d/srtslurm.yaml <<Y
default_account: "benchmark"
default_partition: "batch"
default_time_limit: "6:00:00"
gpus_per_node: $gpn
network_interface: ""
srtctl_root: "$d"
model_paths:
  "$path": "${WORK:-/tmp/srtctl-dry}/model"
containers:
  "$cont": ${WORK:-/tmp/srtctl-dry}/sqsh/img.sqsh
  nginx-sqsh: ${WORK:-/tmp/srtctl-dry}/sqsh/img.sqsh
use_segment_sbatch_directive: false
Y
cd $d && PYTHONPATH=$d/src:${SRTCTL_DEPS} COLUMNS=250 timeout 60 python3 -m srtctl.cli.submit dry-run -f $config
