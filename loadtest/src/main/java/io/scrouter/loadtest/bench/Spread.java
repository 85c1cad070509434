package io.scrouter.loadtest.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/** The median and the range of a few values (rounds of one measurement). */
record Spread(double median, double min, double max, int n) {

    static Spread of(List<Double> values) {
        if (values.isEmpty()) {
            return new Spread(Double.NaN, Double.NaN, Double.NaN, 0);
        }
        List<Double> v = new ArrayList<>(values);
        Collections.sort(v);
        int n = v.size();
        double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
        return new Spread(median, v.get(0), v.get(n - 1), n);
    }

    /** {@code median [min–max]} with the given number format, e.g. {@code "%.2f"}. */
    String format(String number) {
        if (n == 0) {
            return "–";
        }
        return String.format(Locale.ROOT, number + " [" + number + "–" + number + "]", median, min, max);
    }
}
