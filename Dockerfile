# locklab on Debian 12: the entry script installs its apt packages, builds the lab Redis
# (Debian's redis source, MALLOC=libc) and the C++ code, exactly as on a CI machine. The one
# image serves the `locklab` harness and every Redis node of compose.yaml (the lab Redis is
# at /opt/locklab/.lab/redis/bin).
#
# Layers: the packages, the lab Redis and the npm example driver's modules come from the
# entry script and the example drivers alone (the script reads a driver file to know what
# it needs), so a commit that changes only the code rebuilds only the last two layers.
#
#   docker build -t locklab:dev .                                  # what `locklab matrix` needs
#   docker build -t locklab:redis --build-arg LOCKLAB_FOR=run .    # the Redis locks only
#   docker build -t locklab:zk --build-arg LOCKLAB_FOR=run --build-arg LOCKLAB_NEEDS=zookeeper .
#
# LOCKLAB_FOR is the command line the image is set up for (`./locklab setup --plan` shows
# what it installs); LOCKLAB_NEEDS adds package sets by name. A command that needs more at
# run time installs it then (the container runs as root). docs/ci.md: running it with your
# own driver mounted in.
FROM debian:12

ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends bash ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/locklab
ARG LOCKLAB_FOR=matrix
ARG LOCKLAB_NEEDS=

# Set-up below the source: what set-up reads, then packages, lab Redis and npm modules.
COPY locklab ./
COPY examples/drivers/ examples/drivers/
RUN LOCKLAB_NEEDS="$LOCKLAB_NEEDS" ./locklab setup --no-build $LOCKLAB_FOR \
 && rm -rf /var/lib/apt/lists/*

# The source, then the build (the locklab binary; the Java example drivers when planned).
# .dockerignore keeps the host's build/, .lab, runs/ and node_modules out.
COPY . .
RUN LOCKLAB_NEEDS="$LOCKLAB_NEEDS" ./locklab setup $LOCKLAB_FOR

ENV PATH=/opt/locklab/.lab/redis/bin:/opt/locklab/build:$PATH
ENTRYPOINT ["/opt/locklab/locklab"]
CMD ["matrix", "--out", "/runs"]
