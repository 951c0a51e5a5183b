"""The HTTP gateway: the public API as HTTP/JSON with NDJSON streams
(FastAPI on uvicorn), over the lobby's and the accounts' gRPC. No game logic
of its own. Run: ``roundhouse serve gateway``."""
