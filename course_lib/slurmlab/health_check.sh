#!/bin/sh
# The scheduler lab's HealthCheckProgram (slurm.conf(5): slurmd runs it on every node at start-up and every
# HealthCheckInterval seconds, with SLURMD_NODENAME set; it must finish within 60 s). What a check tests is the
# cluster's own (LBNL NHC, a vendor's GPU check: nvidia-smi, DCGM); what it does on a failure is the same
# everywhere: drain the node with the reason, so the scheduler starts no new job there. A drained node keeps
# the job already running on it (DRAIN is not DOWN): that job must fail by itself, and only its next
# attempt avoids the node. Lab-only: the "GPU" is the file a gpu_lost failure writes into
# $SLURMLAB_HEALTH_DIR (the lab's wrapper sets it and SLURM_CONF).
node=${SLURMD_NODENAME:?slurmd sets SLURMD_NODENAME}
if [ -e "$SLURMLAB_HEALTH_DIR/$node" ]; then
    scontrol update NodeName="$node" State=DRAIN Reason="health check: $(head -n 1 "$SLURMLAB_HEALTH_DIR/$node")"
fi
exit 0
