#!/usr/bin/env bash
name="$1"
ehco "Hello, $nmae!"
