# Rampart — the commands the README promises. Every target bootstraps first (idempotent).
SHELL := /bin/bash
DATA ?= ../shared/datasets
CARGO ?= cargo
export ORT_DYLIB_PATH ?= $(CURDIR)/vendor/onnxruntime/lib/libonnxruntime.so.1.22.1

.PHONY: bootstrap bootstrap-run build run install image test eval evasion bench fuzz train memory

## What building and running needs (system packages need root: see README).
bootstrap-run:
	scripts/bootstrap run

## Everything, including what only tests and benchmarks use (nginx, Envoy, Chromium, wrk, kustomize).
bootstrap:
	scripts/bootstrap test

build: bootstrap-run
	$(CARGO) build --release -p rampart-services

## The runtime tree (binary, models, ONNX Runtime) under PREFIX; runs from any directory.
PREFIX ?= /usr/local
install: build
	scripts/install $(PREFIX)

## The container image (buildah; see docs/DEPLOY.md). IMAGE_ARGS=--offline builds it without a registry.
image: build
	scripts/build-image $(IMAGE_ARGS)

## Run everything in one process: proxy on :8080 (demo upstream unless TARGET_URL is set), inference on 127.0.0.1:8081.
run: build
	./target/release/rampart up

## The test suite CI runs.
test: bootstrap
	scripts/test

## Detection figures on the data pool (pattern detectors and models).
eval: build
	./target/release/rampart eval --data $(DATA)

## The generative evasion suite in full (recall per family, mutation, placement and level) and
## the real-traffic false-positive tables; `make test` runs a bounded sample. EVASION_N per family.
evasion: build
	./target/release/rampart eval --data $(DATA) --no-pool --real-traffic --evasion $${EVASION_N:-2000} --no-model-quality

## Criterion benches (print figures; no timed assertions).
bench: bootstrap
	$(CARGO) bench -p rampart-benches

## Re-measure benches/baseline.tsv, the figures make test's quick bench compares with (3 runs, median each).
.PHONY: bench-baseline
bench-baseline: bootstrap
	scripts/bench-quick --write-baseline

## Rampart's proxy vs a bare nginx reverse proxy under wrk load (prints figures; no timed assertions).
.PHONY: bench-proxy
bench-proxy: bootstrap
	scripts/bench-proxy

## nginx + rampart auth and Envoy + rampart extproc vs the bare nginx / Envoy under wrk load (prints figures; no timed assertions).
.PHONY: bench-adapters
bench-adapters: bootstrap
	scripts/bench-adapters

## Resident memory of the inference service with both models loaded (prints figures).
memory: bootstrap
	scripts/model-memory

## Every fuzz target for FUZZ_SECONDS each (default 600).
fuzz: bootstrap
	scripts/fuzz $${FUZZ_SECONDS:-600}

## Retrain the models (explicit; not part of the tests).
train:
	scripts/train $(DATA)
