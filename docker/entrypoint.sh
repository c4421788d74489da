#!/bin/bash
# The image's entrypoint. Its first argument says what the container is:
#   driver ...   Spark on Kubernetes' driver pod: spark-submit in client mode within the pod, with the
#                properties file, class and application Spark's submission client wrote into the pod spec
#   executor     an executor pod: Spark's Kubernetes executor backend, configured by the SPARK_* variables
#                the driver's scheduler sets on the pod (Java only: the record path needs no Python there)
#   anything else  the sparkmirror command: `docker run IMAGE run mm2.properties --state-dir /state`
set -euo pipefail

# As PID 1 (a container without an init) run under tini, which reaps orphans and passes signals on.
if [ "$$" = 1 ] && command -v tini >/dev/null; then
  exec tini -- "$0" "$@"
fi

java="${JAVA_HOME:+$JAVA_HOME/bin/}java"

# The pod's SIGTERM goes to the Python program spark-submit's JVM runs: it stops as `sparkmirror run` does
# (the JVM itself would exit at once, leaving the program without its gateway). Another program: the JVM.
stop_program() {
  local child found=""
  for child in $(cat /proc/"$submit"/task/*/children 2>/dev/null); do
    if grep -qa spark_submit.py /proc/"$child"/cmdline 2>/dev/null; then
      kill -TERM "$child" 2>/dev/null && found=yes
    fi
  done
  [ -n "$found" ] || kill -TERM "$submit" 2>/dev/null || true
}

driver() {
  local options=(--deploy-mode client)
  if [ -n "${SPARK_DRIVER_BIND_ADDRESS:-}" ]; then  # the pod's IP, set by Spark on the driver pod
    options+=(--conf "spark.driver.bindAddress=$SPARK_DRIVER_BIND_ADDRESS")
  fi
  "$SPARK_HOME/bin/spark-submit" "${options[@]}" "$@" &
  submit=$!  # spark-submit execs into the driver JVM: this is its pid
  trap stop_program TERM INT
  while kill -0 "$submit" 2>/dev/null; do
    wait "$submit" || true  # returns early when a signal is trapped; the JVM's status is read below
  done
  local status=0
  wait "$submit" || status=$?
  exit "$status"
}

executor() {
  local options=() i=0 name
  while name="SPARK_JAVA_OPT_$i" && [ -n "${!name+set}" ]; do  # numbered from 0, in order
    options+=("${!name}")
    i=$((i + 1))
  done
  # spark.executor.extraClassPath (SPARK_CLASSPATH) goes before Spark's jars, SPARK_EXTRA_CLASSPATH after
  local classpath="${SPARK_CONF_DIR:-$SPARK_HOME/conf}:${SPARK_CLASSPATH:+$SPARK_CLASSPATH:}$SPARK_HOME/jars/*"
  classpath+="${SPARK_EXTRA_CLASSPATH:+:$SPARK_EXTRA_CLASSPATH}"
  local memory="${SPARK_EXECUTOR_MEMORY:?is set by Spark on executor pods}"
  exec "$java" "${options[@]}" "-Xms$memory" "-Xmx$memory" -cp "$classpath" \
    org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
    --driver-url "${SPARK_DRIVER_URL:?is set by Spark on executor pods}" \
    --executor-id "${SPARK_EXECUTOR_ID:?}" --cores "${SPARK_EXECUTOR_CORES:?}" \
    --app-id "${SPARK_APPLICATION_ID:?}" --hostname "${SPARK_EXECUTOR_POD_IP:?}" \
    --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:?}" --podName "${SPARK_EXECUTOR_POD_NAME:?}"
}

case "${1:-}" in
  driver) shift; driver "$@" ;;
  executor) shift; executor ;;
  *) exec sparkmirror "$@" ;;
esac
