# The harness as an image: the wheel of this checkout installed into a virtualenv on a Debian
# root with Python 3.11. Built offline by `make harness-image`, which makes the base
# (`solar-conformance provision harness-image`: debootstrap, `docker import`) and a build
# context holding this file and wheels/: the harness's wheel and every dependency's wheel,
# downloaded beforehand, so the build itself reaches no registry.
ARG BASE
FROM ${BASE}

# The dependencies first, in a layer of their own: a changed checkout reuses it.
COPY wheels/dependencies /wheels/dependencies
RUN python3 -m venv /opt/solar-conformance \
    && /opt/solar-conformance/bin/pip install --quiet --no-index \
        --find-links /wheels/dependencies /wheels/dependencies/*.whl

COPY wheels/harness /wheels/harness
RUN /opt/solar-conformance/bin/pip install --quiet --no-index \
        --find-links /wheels/dependencies /wheels/harness/*.whl \
    && rm -rf /wheels

# Any user may run it (`--user "$(id -u):$(id -g)"` reads a landscape's owner-only files);
# the report and the artifacts go to the working directory, a mount point for the host.
RUN mkdir -m 1777 /solar
ENV PATH=/opt/solar-conformance/bin:/usr/local/bin:/usr/bin:/bin \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /solar
USER 65532:65532
ENTRYPOINT ["solar-conformance"]
CMD ["run", "--help"]
