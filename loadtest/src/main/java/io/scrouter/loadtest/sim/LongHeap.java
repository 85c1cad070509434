package io.scrouter.loadtest.sim;

import java.util.Arrays;

/** A growable binary min-heap of {@code long}s: the replica model's task times, without boxing. */
final class LongHeap {

    private long[] a;
    private int size;

    LongHeap(int capacity) {
        a = new long[Math.max(4, capacity)];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    long peek() {
        return a[0];
    }

    /** The element at {@code i} in heap order, for sums over everything held. */
    long at(int i) {
        return a[i];
    }

    void clear() {
        size = 0;
    }

    void push(long v) {
        if (size == a.length) {
            a = Arrays.copyOf(a, size * 2);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (a[parent] <= v) {
                break;
            }
            a[i] = a[parent];
            i = parent;
        }
        a[i] = v;
    }

    long pop() {
        long top = a[0];
        long last = a[--size];
        int i = 0;
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            if (child + 1 < size && a[child + 1] < a[child]) {
                child++;
            }
            if (last <= a[child]) {
                break;
            }
            a[i] = a[child];
            i = child;
        }
        if (size > 0) {
            a[i] = last;
        }
        return top;
    }

    /** Replaces the smallest element with {@code v} (one sift instead of a pop and a push). */
    long replaceTop(long v) {
        long top = a[0];
        int i = 0;
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            if (child + 1 < size && a[child + 1] < a[child]) {
                child++;
            }
            if (v <= a[child]) {
                break;
            }
            a[i] = a[child];
            i = child;
        }
        a[i] = v;
        return top;
    }
}
