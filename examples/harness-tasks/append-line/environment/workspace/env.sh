export LANG=C.UTF-8
export PAGER=less
