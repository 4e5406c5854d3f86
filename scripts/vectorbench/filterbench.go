package main

func runFilter(args []string) error { return nil }
