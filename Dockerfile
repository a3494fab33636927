# syntax=docker/dockerfile:1
# One image for every process: `taskweave api|worker|migrate|all` (see compose.yaml).

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/taskweave ./cmd/taskweave \
 && mkdir -p /out/attachments

# Static binary, no shell: distroless with CA certificates (OAuth, webhooks) and a
# non-root user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/taskweave /usr/local/bin/taskweave
# A named volume mounted here starts out owned by the nonroot user.
COPY --from=build --chown=65532:65532 /out/attachments /var/lib/taskweave/attachments
ENV TW_ATTACHMENTS_DIR=/var/lib/taskweave/attachments
USER nonroot:nonroot
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/taskweave"]
CMD ["all"]
