# syntax=docker/dockerfile:1
# sparkmirror for Spark on Kubernetes: one image for the driver pod, the executor pods and the CLI.
#   docker build -t sparkmirror .
# Everything lives under $SPARKMIRROR_HOME. The steps after the OS packages also run outside Docker, with that
# prefix in a temporary folder: tests/e2e/test_container_image.py runs them when no container engine is there.
FROM python:3.12-slim-bookworm

ARG SPARKMIRROR_HOME=/opt/sparkmirror
# Build-time only: Maven's repository, on a cache mount so that rebuilds download nothing
ARG SPARKMIRROR_MAVEN_REPO=/root/.m2/repository
ENV SPARKMIRROR_HOME=${SPARKMIRROR_HOME} \
    SPARKMIRROR_CACHE=${SPARKMIRROR_HOME}/cache \
    SPARK_HOME=${SPARKMIRROR_HOME}/spark \
    PATH=${SPARKMIRROR_HOME}/bin:${SPARKMIRROR_HOME}/venv/bin:${PATH}

# OS packages: a JDK (its javac builds the record path's writer at setup), Maven (resolves the pinned jars
# at setup), tini (an init for the pods), and the user Spark's images run as (uid 185)
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jdk-headless maven tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 185 --create-home sparkmirror

COPY pyproject.toml README.md ${SPARKMIRROR_HOME}/build/
COPY src ${SPARKMIRROR_HOME}/build/src
COPY docker/entrypoint.sh ${SPARKMIRROR_HOME}/bin/sparkmirror-entrypoint

# The package with pyspark (Spark's jars, the Kubernetes backend's included, and bin/spark-submit) in a venv;
# SPARK_HOME is the pyspark package
RUN --mount=type=cache,target=/root/.cache/pip \
    python3 -m venv "$SPARKMIRROR_HOME/venv" \
    && "$SPARKMIRROR_HOME/venv/bin/pip" install --quiet "$SPARKMIRROR_HOME/build" \
    && ln -s "$("$SPARKMIRROR_HOME/venv/bin/python" -c \
        'import importlib.util; print(importlib.util.find_spec("pyspark").submodule_search_locations[0])')" \
        "$SPARK_HOME" \
    && rm -rf "$SPARKMIRROR_HOME/build"

# The pinned jars, the record path's writer and the driver's class-data archive, into $SPARKMIRROR_CACHE
RUN --mount=type=cache,target=/root/.m2 \
    sparkmirror setup

USER sparkmirror
WORKDIR /home/sparkmirror
ENTRYPOINT ["sparkmirror-entrypoint"]
CMD ["--help"]
