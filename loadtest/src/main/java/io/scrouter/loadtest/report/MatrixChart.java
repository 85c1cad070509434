package io.scrouter.loadtest.report;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The matrix at a glance, as a PNG drawn with plain AWT (headless): for every scenario, the default policy's
 * p95 and p99 slowdown divided by the best other contender's and by seed's, with the target lines (1.05 and
 * 1.02). Below 1 the default is better.
 */
public final class MatrixChart {

    private static final Color[] COLOURS = {new Color(0x3182bd), new Color(0x08519c), new Color(0xfd8d3c),
            new Color(0xd94701)};
    private static final String[] LABELS = {"p95 vs best other", "p99 vs best other", "p95 vs seed", "p99 vs seed"};

    private MatrixChart() {
    }

    public static void write(String title, List<MatrixReport.Verdict> verdicts, Path file) throws IOException {
        int scenarios = verdicts.size() / 2;
        int w = Math.max(900, 90 + scenarios * 64);
        int h = 560;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
        g.drawString(title, 20, 24);
        int x0 = 60;
        int y0 = 60;
        int pw = w - x0 - 30;
        int ph = 340;
        double lo = 0.5;
        double hi = 1.5;
        for (MatrixReport.Verdict v : verdicts) {
            hi = Math.max(hi, Math.min(4, Math.max(v.vsBest(), v.vsSeed()) * 1.05));
            lo = Math.min(lo, Math.max(0.05, Math.min(v.vsBest(), v.vsSeed()) * 0.95));
        }
        double logLo = Math.log(lo);
        double logHi = Math.log(hi);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        for (double t : new double[] {0.1, 0.2, 0.5, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2, 3, 4}) {
            if (t < lo || t > hi) {
                continue;
            }
            int yy = y(t, y0, ph, logLo, logHi);
            g.setColor(t == 1.0 ? Color.GRAY : new Color(0xe5e5e5));
            g.drawLine(x0, yy, x0 + pw, yy);
            g.setColor(Color.DARK_GRAY);
            g.drawString(String.format(Locale.ROOT, "%.2f", t), x0 - 36, yy + 4);
        }
        g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10, new float[] {6, 4}, 0));
        g.setColor(new Color(0x31a354));
        int yBest = y(MatrixReport.BEST_FACTOR, y0, ph, logLo, logHi);
        g.drawLine(x0, yBest, x0 + pw, yBest);
        g.setStroke(new BasicStroke(1));
        g.drawString("1.05", x0 + pw - 28, yBest - 3);
        int group = pw / Math.max(1, scenarios);
        int bar = Math.max(3, (group - 10) / 4);
        for (int i = 0; i < scenarios; i++) {
            MatrixReport.Verdict p95 = verdicts.get(2 * i);
            MatrixReport.Verdict p99 = verdicts.get(2 * i + 1);
            double[] values = {p95.vsBest(), p99.vsBest(), p95.vsSeed(), p99.vsSeed()};
            int one = y(1.0, y0, ph, logLo, logHi);
            for (int k = 0; k < 4; k++) {
                int yy = y(Math.max(lo, Math.min(hi, values[k])), y0, ph, logLo, logHi);
                g.setColor(COLOURS[k]);
                int bx = x0 + i * group + 5 + k * bar;
                g.fillRect(bx, Math.min(one, yy), bar - 1, Math.max(1, Math.abs(one - yy)));
            }
            g.setColor(Color.BLACK);
            int cx = x0 + i * group + group / 2;
            g.rotate(-Math.PI / 4, cx, y0 + ph + 12);
            g.drawString(p95.scenario(), cx - g.getFontMetrics().stringWidth(p95.scenario()), y0 + ph + 12);
            g.rotate(Math.PI / 4, cx, y0 + ph + 12);
        }
        for (int k = 0; k < 4; k++) {
            g.setColor(COLOURS[k]);
            g.fillRect(x0 + k * 150, h - 26, 12, 12);
            g.setColor(Color.BLACK);
            g.drawString(LABELS[k], x0 + k * 150 + 16, h - 15);
        }
        g.drawString("default's slowdown ÷ other's (log scale; below 1: default better)", x0, y0 - 10);
        g.dispose();
        ImageIO.write(img, "png", file.toFile());
    }

    private static int y(double v, int y0, int ph, double logLo, double logHi) {
        return y0 + ph - (int) Math.round((Math.log(v) - logLo) / (logHi - logLo) * ph);
    }
}
