package io.scrouter.loadtest.profile;

import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Renders folded stacks ({@code root;child;leaf → count}) as a static SVG flame graph: the root at the bottom,
 * each frame as wide as the samples that pass through it, children in alphabetical order. Hovering a frame shows
 * its name and share (an SVG {@code <title>}); no script, so it renders anywhere an SVG does, GitHub included.
 * Colour follows the library of the frame's class, so Redisson, gRPC, Netty and the router's own code stand apart;
 * the two bottom rows (all, thread group) are grey.
 */
public final class FlameGraph {

    private static final int WIDTH = 1200;
    private static final int FRAME_HEIGHT = 16;
    private static final int MARGIN = 10;
    private static final double CHAR_WIDTH = 6.6;
    /** Frames narrower than this are left out (with their children): they cannot be read, and they make the file large. */
    private static final double MIN_WIDTH = 1.0;

    /** One frame of the merged tree. */
    private static final class Node {
        final String name;
        long count;
        final Map<String, Node> children = new TreeMap<>();

        Node(String name) {
            this.name = name;
        }
    }

    private FlameGraph() {
    }

    /** The SVG of {@code folded}, titled {@code title}. */
    public static String svg(String title, Map<String, Long> folded, Function<String, String> libraryOfFrame) {
        Node root = new Node("all");
        int depth = 0;
        for (Map.Entry<String, Long> e : folded.entrySet()) {
            String[] frames = e.getKey().split(";");
            depth = Math.max(depth, frames.length);
            Node n = root;
            n.count += e.getValue();
            for (String f : frames) {
                n = n.children.computeIfAbsent(f, Node::new);
                n.count += e.getValue();
            }
        }
        int height = (depth + 1) * FRAME_HEIGHT + 3 * MARGIN + 20;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<?xml version=\"1.0\" standalone=\"no\"?>%n"
                + "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                + "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana, sans-serif\" font-size=\"11\">%n"
                + "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fdfdf6\"/>%n"
                + "<text x=\"%d\" y=\"%d\" font-size=\"14\">%s (%,d samples)</text>%n",
                WIDTH, height, WIDTH, height, WIDTH, height, MARGIN, MARGIN + 12, escape(title), root.count));
        double scale = (WIDTH - 2.0 * MARGIN) / Math.max(1, root.count);
        draw(svg, root, MARGIN, height - MARGIN - FRAME_HEIGHT, scale, root.count, libraryOfFrame, 0);
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static void draw(StringBuilder svg, Node n, double x, int y, double scale, long total,
                             Function<String, String> libraryOfFrame, int level) {
        double w = n.count * scale;
        if (w < MIN_WIDTH) {
            return;
        }
        String label = String.format(Locale.ROOT, "%s (%,d samples, %.1f%%)", n.name, n.count, 100.0 * n.count / total);
        svg.append(String.format(Locale.ROOT, "<g><title>%s</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
                + "height=\"%d\" fill=\"%s\" rx=\"2\"/>", escape(label), x, y, w, FRAME_HEIGHT - 1, colour(level <= 1 ? "thread" : libraryOfFrame.apply(n.name))));
        int chars = (int) ((w - 4) / CHAR_WIDTH);
        if (chars >= 3) {
            String text = n.name.length() <= chars ? n.name : n.name.substring(0, chars - 2) + "..";
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">%s</text>", x + 3, y + FRAME_HEIGHT - 4,
                    escape(text)));
        }
        svg.append("</g>\n");
        double cx = x;
        for (Node c : n.children.values()) {
            draw(svg, c, cx, y - FRAME_HEIGHT, scale, total, libraryOfFrame, level + 1);
            cx += c.count * scale;
        }
    }

    /** Colour of a frame by its library's name, as {@link JfrDigest#libraryOf} gives it. */
    static String colour(String library) {
        return switch (library == null ? "" : library) {
            case "router (io.scrouter)" -> "rgb(90,170,90)";
            case "Redisson" -> "rgb(225,90,75)";
            case "Netty" -> "rgb(100,150,215)";
            case "gRPC" -> "rgb(160,125,215)";
            case "protobuf" -> "rgb(230,170,60)";
            case "Caffeine" -> "rgb(60,180,180)";
            case "Prometheus metrics", "logging", "Jackson" -> "rgb(200,200,90)";
            case "thread" -> "rgb(190,190,190)";
            default -> "rgb(235,150,110)"; // the JDK and anything else
        };
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
