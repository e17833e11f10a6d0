# locklab on Debian 12: the entry script installs its apt packages, builds the lab Redis
# (Debian's redis source, MALLOC=libc) and the C++ code, exactly as on a CI machine. The one
# image serves the `locklab` harness and every Redis node of compose.yaml (the lab Redis is
# at /opt/locklab/.lab/redis/bin).
FROM debian:12

ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends bash ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/locklab
COPY . .
# .dockerignore keeps the host's build/, .lab and runs/ out: everything is built here.
RUN ./locklab setup && rm -rf /var/lib/apt/lists/*

ENV PATH=/opt/locklab/.lab/redis/bin:/opt/locklab/build:$PATH
ENTRYPOINT ["/opt/locklab/locklab"]
CMD ["matrix", "--out", "/runs"]
