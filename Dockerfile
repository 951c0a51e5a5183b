# One image for every Roundhouse process (see deploy/k8s/).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml ./
COPY proto ./proto
COPY services ./services
RUN pip install --no-cache-dir grpcio-tools==1.85.1 \
 && mkdir -p gen/python/roundhouse/v1 \
 && touch gen/python/roundhouse/__init__.py gen/python/roundhouse/v1/__init__.py \
 && python -m grpc_tools.protoc -Iproto --python_out=gen/python --grpc_python_out=gen/python proto/roundhouse/v1/*.proto \
 && pip install --no-cache-dir . \
 && pip uninstall -y grpcio-tools
USER 1000
