/* plot.h: figures through gnuplot (PNG via pngcairo), from the CSV files we write anyway.
 * The gnuplot scripts live in common/plots/, so a reader can re-plot or edit them by hand:
 *   gnuplot -e "csv='traces/01_matmul_add/64_bf16_cold_eager.csv'; png='x.png'; title='...'" \
 *           common/plots/steps.gp
 */
#ifndef PLOT_H
#define PLOT_H

/* Runs common/plots/<script> with gnuplot, passing csv, png and title; the PNG appears under
 * its final name only when gnuplot succeeded. gnuplot is started without a shell, and names and
 * title reach it byte for byte: any name the file system allows works, and none runs a command.
 * Without gnuplot: says so once, returns -1, and the caller keeps going (the CSV is the result;
 * the picture is a convenience). */
int plot_run(const char *script, const char *csv, const char *png, const char *title);

#endif
