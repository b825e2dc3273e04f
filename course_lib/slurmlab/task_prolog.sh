#!/bin/sh
# The scheduler lab's TaskProlog (benchmarks/results/slurmlab.md): runs before each task of a job step on its node; each
# "export NAME=value" line it prints joins the task's environment. Lab-only settings: the lab's nodes are
# namespaces of one machine, so torchrun is told its node's own address (PET_LOCAL_ADDR), whether
# its agent hosts the rendezvous store (the allocation's first node: PET_RDZV_CONF is_host), and gloo
# which interface to use. A real cluster needs none of this.
addr=$(ip -4 -o addr show dev "${SLURMLAB_IFACE:-eth0}" | sed -n 's/.* inet \([0-9.]*\)\/.*/\1/p')
first=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
if [ "$SLURMD_NODENAME" = "$first" ]; then host=true; else host=false; fi
echo "export PET_LOCAL_ADDR=$addr"
echo "export PET_RDZV_CONF=is_host=$host,join_timeout=${SLURMLAB_JOIN_TIMEOUT:-600},read_timeout=15"
echo "export GLOO_SOCKET_IFNAME=${SLURMLAB_IFACE:-eth0}"
echo "export NODELAB_NODE=$SLURMD_NODENAME"
echo "export FAULTLAB_NODE=$SLURMD_NODENAME"
