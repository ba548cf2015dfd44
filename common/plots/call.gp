# How common/plot.c runs every figure, without a shell:
#   gnuplot -c common/plots/call.gp SCRIPT CSV PNG TITLE [CSV2]
# csv, png and title are set to the arguments byte for byte, with no quoting to get right, so no
# file name or title can turn into a command; CSV2, a second CSV, for a script that draws two
# (cold_vs_warm.gp). By hand, the -e form in each script's usage line does the same.
csv = ARG2
png = ARG3
title = ARG4
if (ARGC >= 5) csv2 = ARG5
load ARG1
