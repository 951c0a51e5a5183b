# One image for every Roundhouse process: rules services, lobby, bot dispatcher
# and Celery bot workers (the command picks the process; see deploy/k8s/ and
# docs/deploy.md).
#
#   docker build -t roundhouse:latest .
#
# Stage 1 generates the gRPC code (gen/python, never committed) and builds
# wheels of Roundhouse and every dependency; stage 2 installs only those
# wheels, so the runtime image has no compiler tools, no grpcio-tools and no
# source tree.
FROM python:3.11-slim AS build
WORKDIR /src
RUN pip install --no-cache-dir grpcio-tools==1.85.1
COPY pyproject.toml ./
COPY proto ./proto
COPY services ./services
RUN mkdir -p gen/python/roundhouse/v1 \
 && touch gen/python/roundhouse/__init__.py gen/python/roundhouse/v1/__init__.py \
 && python -m grpc_tools.protoc -Iproto --python_out=gen/python --grpc_python_out=gen/python \
      proto/roundhouse/v1/*.proto \
 && pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
# Unbuffered output: log lines reach the container log at once.
ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels roundhouse \
 && rm -rf /wheels
WORKDIR /app
# A numeric user, so Kubernetes can verify runAsNonRoot.
USER 1000
CMD ["roundhouse", "--help"]
