#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kfd_criu4_test.sh's cases on CRIU 4.3 (experimental's, unpacked beside
# trixie's 4.1 by scripts/debian13.sh), with its two of 4.3 alone: the
# plugin's options by --plugin-option.

KFD_CRIU4_BIN=/opt/criu-4.3/bin exec sh /opt/kfd-criu/debian13/kfd_criu4_test.sh
