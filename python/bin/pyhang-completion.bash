# bash completion for pyhang's command line: installed as
# share/bash-completion/completions/pyhang (bash-completion loads it when
# `pyhang` is first completed), or `source` it from ~/.bashrc.
# python/tests/test_man_and_completion.py holds these lists equal to pyhang's own.

_pyhang_commands="report py-bt py-bt-full py-locals py-tasks gil-holder lock-owner fork-hazards merge job gcore watch"
_pyhang_report_options="--json --pretty --native-depth --locals --merged --dot --tree --no-stop --stop --gdb --snapshot --once --interval --after --for --sysroot --lib-search-path -p --pid"
_pyhang_thread_options="--no-stop --stop --gdb --sysroot --lib-search-path -p --pid"
_pyhang_merge_options="--json --pretty --dot"
_pyhang_job_options="--slurm --hosts --local --json --pretty --dot --save --fanout --deadline --remote-pyhang --srun-arg --ssh-arg --stop"
_pyhang_gcore_options="-o --output --tree --stop -p --pid"
_pyhang_watch_options="--interval --after --for --json --pretty --native-depth --locals --merged -p --pid"

_pyhang() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} command="" w i
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case " $_pyhang_commands " in *" $w "*) command=$w; break ;; esac
    done
    case $prev in
        -p|--pid)
            COMPREPLY=($(compgen -W "$(cd /proc 2>/dev/null && echo [0-9]*)" -- "$cur")); return ;;
        --sysroot|--save)
            COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --snapshot|--hosts|-o|--output|--remote-pyhang|--lib-search-path)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --native-depth|--interval|--after|--for|--fanout|--deadline|--slurm|--srun-arg|--ssh-arg)
            return ;;
    esac
    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$_pyhang_commands --help --version" -- "$cur")); return
    fi
    if [[ $cur == -* ]]; then
        local options
        case $command in
            report) options=$_pyhang_report_options ;;
            merge) options=$_pyhang_merge_options ;;
            job) options=$_pyhang_job_options ;;
            gcore) options=$_pyhang_gcore_options ;;
            watch) options=$_pyhang_watch_options ;;
            *) options=$_pyhang_thread_options ;;
        esac
        COMPREPLY=($(compgen -W "$options --help" -- "$cur")); return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))   # a core, its executable, a report file
}
complete -o filenames -F _pyhang pyhang
